"""Issue 10 item 4 for Lunch Flow: every fault ends the sync `failed` (whole, or naming the
failed account) with a clear error, leaves the failed account's ledger unchanged, duplicates
nothing, and the next sync recovers. The matrix is printed as a table (pytest -s)."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from finance.models import Account, Transaction
from providers.testing.lunchflow_server import Fault, Scenario
from tests.providers.conftest import connect, day, run_sync

TXNS = "/accounts/a2/transactions"


def _refused(lunchflow, settings) -> Callable[[], None]:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    original = settings.LUNCHFLOW_BASE_URL
    settings.LUNCHFLOW_BASE_URL = f"http://127.0.0.1:{port}/api/v1"
    return lambda: setattr(settings, "LUNCHFLOW_BASE_URL", original)


def _fault(path: str, fault: Fault):
    def apply(lunchflow, settings) -> Callable[[], None]:
        lunchflow.scenario.faults[path] = fault
        return lambda: lunchflow.scenario.faults.pop(path)

    return apply


def _missing_fields(lunchflow, settings) -> Callable[[], None]:
    row = lunchflow.scenario.add_transaction("a2", "bad", day(0), -1, "no amount")
    del row["amount"]
    return lambda: row.update(amount=-1)


def _page_stops_early(lunchflow, settings) -> Callable[[], None]:
    lunchflow.scenario.add_transaction("a2", "same-day", day(1), -8, "twin")
    lunchflow.scenario.page_size = 1
    return lambda: setattr(lunchflow.scenario, "page_size", None)


CASES = {
    "connection refused": (_refused, "whole"),
    "reset mid-body": (_fault(TXNS, Fault(kind="cut")), "account"),
    "connection dropped": (_fault(TXNS, Fault(kind="drop")), "account"),
    "timeout": (_fault(TXNS, Fault(kind="slow", delay=4.0)), "account"),
    "HTTP 500": (_fault(TXNS, Fault(status=500)), "account"),
    "HTTP 502": (_fault(TXNS, Fault(status=502)), "account"),
    "HTTP 403": (_fault("/accounts", Fault(status=403)), "whole"),
    "HTTP 429 + Retry-After": (
        _fault(TXNS, Fault(status=429, headers={"Retry-After": "1"})),
        "account",
    ),
    "malformed JSON": (_fault(TXNS, Fault(kind="malformed")), "account"),
    "wrong shape": (_fault(TXNS, Fault(kind="shape", body={"transactions": "nope"})), "account"),
    "missing fields": (_missing_fields, "account"),
    "page stops early": (_page_stops_early, "account"),
    "balance 500": (_fault("/accounts/a2/balance", Fault(status=500)), "account"),
}
MATRIX: list[tuple[str, str, str, str]] = []


def _ledger(account_name: str) -> list[tuple]:
    return list(
        Transaction.objects.filter(account__name=account_name)
        .order_by("external_id")
        .values_list("external_id", "amount", "pending", "updated_at")
    )


@pytest.mark.parametrize("case", list(CASES))
def test_fault(case, alice, lunchflow, settings):
    settings.PROVIDER_HTTP_TIMEOUT = 2.0  # roomy on a loaded machine; the slow fault is 4 s
    settings.PROVIDER_MAX_429_WAITS = 1
    scenario: Scenario = lunchflow.scenario
    scenario.add_account("a1", "Checking", "EUR", "10")
    scenario.add_account("a2", "Savings", "EUR", "20")
    scenario.add_transaction("a1", "c1", day(5), -1, "one")
    scenario.add_transaction("a2", "s1", day(5), -2, "two")
    scenario.add_transaction("a2", "s2", day(1), -3, "three", pending=True)
    connection = connect(alice)
    assert run_sync(connection).status == "completed"
    savings_before = _ledger("Savings")
    balance_before = Account.objects.get(name="Savings").reported_balance
    scenario.add_transaction("a2", "s3", day(0), -4, "four")
    scenario.balances["a2"]["amount"] = "25"

    apply, scope = CASES[case]
    undo = apply(lunchflow, settings)
    failed = run_sync(connection)
    assert failed.status == "failed", case
    assert failed.error and "test-key" not in failed.error
    if scope == "account":
        assert [f["name"] for f in failed.stats["failed_accounts"]] == ["Savings"]
        assert "Savings" in failed.error
    assert _ledger("Savings") == savings_before
    assert Account.objects.get(name="Savings").reported_balance == balance_before

    undo()
    recovered = run_sync(connection)
    assert recovered.status == "completed", recovered.error
    ids = list(
        Transaction.objects.filter(account__name="Savings").values_list("external_id", flat=True)
    )
    assert len(ids) == len(set(ids))
    assert {"s1", "s2", "s3"} <= set(ids)
    assert Account.objects.get(name="Savings").reported_balance == 25
    MATRIX.append((case, failed.status, scope, failed.error[:70]))


def teardown_module() -> None:
    if MATRIX:
        width = max(len(row[0]) for row in MATRIX)
        print("\nLunch Flow fault matrix (then recovered: completed, no duplicates)")
        for case, status, scope, error in MATRIX:
            print(f"  {case:<{width}}  {status:<7} {scope:<8} {error}")
