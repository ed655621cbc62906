"""Issue 10 item 4 for SimpleFIN, mirroring tests/providers/test_fault_matrix.py (Lunch Flow):
every fault ends the sync `failed` with a clear error (naming the account when only one
account is at fault), leaves the failed accounts' ledgers unchanged, duplicates nothing, never
shows the access URL's credentials, and the next sync recovers. One `GET /accounts` answers for
every account, so a transport fault fails the whole sync. Network faults outlast the client's
retries. The matrix is printed as a table (pytest -s)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from decimal import Decimal

import pytest

from finance.models import Account, Transaction
from providers.models import ProviderConnection
from providers.services import connection_create
from providers.simplefin.client import DEFAULT_RETRIES
from providers.simplefin.credentials import AccessUrl
from providers.testing import simplefin_pytest
from providers.testing.simplefin_server import FakeSimplefinServer, Scenario, account_set
from tests.providers.conftest import run_sync

simplefin_server = simplefin_pytest.simplefin_server
ATTEMPTS = DEFAULT_RETRIES + 1
DAY = 86400


@pytest.fixture(autouse=True)
def _fast(settings) -> None:
    settings.SIMPLEFIN_RETRY_BASE_DELAY = 0.001
    settings.PROVIDER_HTTP_TIMEOUT = 2.0  # roomy on a loaded machine; the slow fault is 4 s
    settings.SIMPLEFIN_INCLUDE_PENDING = True
    settings.SIMPLEFIN_HISTORY_DAYS = 45  # one window per sync


def _tx(tid: str, days_ago: int, amount: str, description: str, **extra) -> dict:
    posted = int(time.time()) - days_ago * DAY
    return {"id": tid, "posted": posted, "amount": amount, "description": description, **extra}


def _account(aid: str, name: str, balance: str) -> dict:
    return {
        "org": {"domain": "bank.example", "name": "Bank", "sfin-url": "https://bank.example/"},
        "id": aid,
        "name": name,
        "currency": "USD",
        "balance": balance,
        "balance-date": int(time.time()),
        "transactions": [],
    }


def _refused(server, connection) -> Callable[[], None]:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    original = connection.credential
    access = AccessUrl.parse(original)
    host = access.base_url.split("//", 1)[1].split("/", 1)[0]
    connection.credential = original.replace(host, f"127.0.0.1:{port}")
    connection.save(update_fields=["credential_encrypted"])

    def undo() -> None:
        connection.credential = original
        connection.save(update_fields=["credential_encrypted"])

    return undo


def _fault(kind: str, times: int = ATTEMPTS, **kwargs):
    def apply(server, connection) -> Callable[[], None]:
        server.fault(kind, times, paths=("accounts",), **kwargs)
        return server.clear_failures

    return apply


def _status(status: int, **kwargs):
    def apply(server, connection) -> Callable[[], None]:
        server.fail_with(status, paths=("accounts",), **kwargs)
        return server.clear_failures

    return apply


def _missing_fields(server, connection) -> Callable[[], None]:
    savings = server.scenario.accounts[1]
    row = _tx("bad", 0, "-1.00", "no amount")
    del row["amount"]
    savings["transactions"].append(row)
    return lambda: row.update(amount="-1.00")


def _wrong_account_shape(server, connection) -> Callable[[], None]:
    """Valid JSON, right overall, but Savings' `transactions` is not a list."""
    body = account_set(server.scenario, {"pending": ["1"]}, server.base_url)
    body["accounts"][1]["transactions"] = "not a list"
    server.fault("shape", 1, body=body, paths=("accounts",))
    return server.clear_failures


CASES = {
    "connection refused": (_refused, "whole"),
    "reset mid-body": (_fault("cut"), "whole"),
    "connection dropped": (_fault("drop"), "whole"),
    "timeout": (_fault("slow", delay=4.0), "whole"),
    "HTTP 500": (_status(500), "whole"),
    "HTTP 502": (_status(502), "whole"),
    "HTTP 403": (_status(403), "whole"),
    "HTTP 429 + Retry-After": (_status(429, headers={"Retry-After": "120"}), "whole"),
    "malformed JSON": (_fault("malformed", times=1), "whole"),
    "wrong shape (body)": (_fault("shape", times=1, body={"unexpected": [1, 2]}), "whole"),
    "wrong shape (account)": (_wrong_account_shape, "account"),
    "missing fields": (_missing_fields, "account"),
}
MATRIX: list[tuple[str, str, str, str]] = []


def _ledger(name: str) -> list[tuple]:
    return list(
        Transaction.objects.filter(account__name=name)
        .order_by("external_id")
        .values_list("external_id", "amount", "pending", "updated_at")
    )


def _connect(server: FakeSimplefinServer, alice) -> ProviderConnection:
    connection, _ = connection_create(
        family=alice.family,
        provider="simplefin",
        setup_token=server.create_setup_token(server.scenario),
    )
    return connection


@pytest.mark.parametrize("case", list(CASES))
def test_fault(case, alice, simplefin_server: FakeSimplefinServer):
    scenario = Scenario(
        accounts=[_account("A1", "Checking", "10"), _account("A2", "Savings", "20")]
    )
    scenario.accounts[0]["transactions"].append(_tx("c1", 5, "-1.00", "one"))
    scenario.accounts[1]["transactions"] += [
        _tx("s1", 5, "-2.00", "two"),
        {"id": "s2", "posted": 0, "amount": "-3.00", "description": "three", "pending": True},
    ]
    simplefin_server.scenario = scenario
    connection = _connect(simplefin_server, alice)
    secrets = AccessUrl.parse(connection.credential).secrets()
    assert run_sync(connection).status == "completed"
    before = {name: _ledger(name) for name in ("Checking", "Savings")}
    balances = {a.name: a.reported_balance for a in Account.objects.all()}
    scenario.accounts[0]["transactions"].append(_tx("c2", 0, "-5.00", "five"))
    scenario.accounts[0]["balance"] = "5"
    scenario.accounts[1]["transactions"].append(_tx("s3", 0, "-4.00", "four"))
    scenario.accounts[1]["balance"] = "16"

    apply, scope = CASES[case]
    undo = apply(simplefin_server, connection)
    failed = run_sync(connection)
    assert failed.status == "failed", (case, failed.error, failed.stats)
    assert failed.error
    for secret in secrets:
        assert secret not in failed.error
        assert secret not in str(failed.stats)
    if scope == "account":
        assert [f["name"] for f in failed.stats["failed_accounts"]] == ["Savings"]
        assert "Savings" in failed.error
        assert {"c1", "c2"} == {row[0] for row in _ledger("Checking")}
    else:
        assert _ledger("Checking") == before["Checking"]
        assert Account.objects.get(name="Checking").reported_balance == balances["Checking"]
    assert _ledger("Savings") == before["Savings"]
    assert Account.objects.get(name="Savings").reported_balance == balances["Savings"]
    if case.startswith("HTTP 429"):
        assert failed.retryable and failed.stats.get("retry_after") == 120
    connection.refresh_from_db()

    undo()
    if connection.status == ProviderConnection.Status.REQUIRES_UPDATE:
        connection.status = ProviderConnection.Status.GOOD  # the user reconnected
        connection.save(update_fields=["status"])
    recovered = run_sync(connection)
    assert recovered.status == "completed", recovered.error
    for name, expected in (("Checking", {"c1", "c2"}), ("Savings", {"s1", "s2", "s3"})):
        ids = list(
            Transaction.objects.filter(account__name=name).values_list("external_id", flat=True)
        )
        assert len(ids) == len(set(ids)), name
        assert expected <= set(ids), name
    assert Account.objects.get(name="Savings").reported_balance == Decimal(16)
    assert Account.objects.get(name="Checking").reported_balance == Decimal(5)
    MATRIX.append((case, failed.status, scope, failed.error[:80]))


def teardown_module() -> None:
    if MATRIX:
        width = max(len(row[0]) for row in MATRIX)
        print("\nSimpleFIN fault matrix (then recovered: completed, no duplicates)")
        print(f"  {'fault':<{width}}  {'sync':<7} {'scope':<8} error")
        for case, status, scope, error in MATRIX:
            print(f"  {case:<{width}}  {status:<7} {scope:<8} {error}")
