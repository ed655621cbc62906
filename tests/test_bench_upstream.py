"""The bench's fake Lunch Flow server in a process of its own (bench/upstream.py): it serves
the scenario as it was when it started, over real HTTP, from another process, and reports the
requests it answered when it stops."""

from __future__ import annotations

import os

import requests

from bench.upstream import LunchFlowApart
from providers.testing.lunchflow_server import Scenario


def test_the_server_runs_apart_and_counts_its_requests():
    scenario = Scenario()
    scenario.add_account("acc-1", "Everyday", currency="EUR", balance="10.00")
    with LunchFlowApart(scenario) as upstream:
        scenario.add_account("acc-2", "Added after the start", currency="EUR", balance="1.00")
        answer = requests.get(
            f"{upstream.base_url}/accounts", headers={"x-api-key": "test-key"}, timeout=10
        )
        assert answer.status_code == 200, answer.text
        assert [a["id"] for a in answer.json()["accounts"]] == ["acc-1"]
        refused = requests.get(
            f"{upstream.base_url}/accounts", headers={"x-api-key": "wrong"}, timeout=10
        )
        assert refused.status_code in (401, 403)
        pid = upstream._process.pid
        assert pid != os.getpid()
    assert upstream.requests == 2
    assert not upstream._process.is_alive()
    assert scenario.requests == []  # counted in the server's process, not in this one
