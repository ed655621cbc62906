"""A bulk create of many items runs with the collector's cycle search paused (core/collector.py):
its items make no reference cycles, so the young collections their containers set off found
nothing to free. The collector is back on after the request, whatever its answer."""

from __future__ import annotations

import gc
import sys

import pytest

pytestmark = pytest.mark.django_db
URL = "/api/v1/transactions/bulk"


def _items(account, n):
    return [
        {"account_id": str(account.id), "date": "2024-05-02", "amount": f"{i}.25", "name": f"S {i}"}
        for i in range(n)
    ]


def _in_bulk_view() -> bool:
    frame = sys._getframe()
    while frame is not None:
        code = frame.f_code
        if code.co_name == "bulk" and code.co_filename.endswith("views/transactions.py"):
            return True
        frame = frame.f_back
    return False


@pytest.fixture
def collections():
    """The generation of each collection that started while the bulk view was running."""
    seen: list[int] = []

    def count(phase, info):
        if phase == "start" and _in_bulk_view():
            seen.append(info["generation"])

    gc.enable()
    gc.callbacks.append(count)
    yield seen
    gc.callbacks.remove(count)


def test_a_bulk_of_many_items_sets_off_no_collection(alice, collections):
    account = alice.account()
    client = alice.client
    client.get("/api/v1/accounts")  # the client's own first-use allocations, before counting
    collections.clear()
    r = client.post(URL, {"transactions": _items(account, 600)}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["summary"]["created"] == 600
    # At most the one the pause's end sets off (the containers counted meanwhile) while the
    # view ran: without the pause, 600 items' containers set off about twenty. The
    # collector is on again after it.
    assert len(collections) <= 1, collections
    assert gc.isenabled()


def test_the_collector_is_back_on_after_a_refused_bulk(alice):
    gc.enable()
    r = alice.client.post(URL, {"transactions": "not a list"}, format="json")
    assert r.status_code == 422
    assert gc.isenabled()
