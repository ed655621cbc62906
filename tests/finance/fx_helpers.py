"""The fake European Central Bank over real HTTP on 127.0.0.1, and helpers for rates tests."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest

from providers.testing.ecb_server import FakeEcb, Scenario


@pytest.fixture
def ecb(settings) -> Iterator[FakeEcb]:
    server = FakeEcb(Scenario()).start()
    settings.FX_BASE_URL = server.base_url
    settings.FX_PROVIDER = "ecb"
    settings.PROVIDER_HTTP_TIMEOUT = 2.0
    try:
        yield server
    finally:
        server.stop()


def every_day(scenario: Scenario, first: dt.date, last: dt.date, **rates: Any) -> None:
    """The same rates on every working day of [first, last], as the ECB publishes them."""
    day = first
    while day <= last:
        if day.weekday() < 5:
            scenario.add_day(day, **rates)
        day += dt.timedelta(days=1)


def create_account(household: Any, name: str, currency: str, account_type: str = "depository"):
    r = household.client.post(
        "/api/v1/accounts",
        {"account": {"name": name, "currency": currency, "account_type": account_type}},
        format="json",
    )
    assert r.status_code == 201, r.content
    return r.json()["id"]


def create_transaction(household: Any, account_id: str, day: dt.date, amount: str, **extra: Any):
    fields = {"account_id": account_id, "date": day.isoformat(), "amount": amount, "name": "x"}
    fields.update(extra)
    r = household.client.post("/api/v1/transactions", {"transaction": fields}, format="json")
    assert r.status_code == 201, r.content
    return r.json()
