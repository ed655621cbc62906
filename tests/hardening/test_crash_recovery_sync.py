"""Issue 10 item 5 for syncs: a real worker process running a sync against the fake Lunch Flow
server is SIGKILLed mid-sync, on PostgreSQL. Two moments:

- `while fetching`: the fake server answers the second account's transactions slowly and the
  process dies waiting for them;
- `mid-write`: the second account's rows are already inserted in its open transaction (the
  test holds a row lock that the same transaction needs next, and checks in pg_locks that the
  child has written to the transactions table), then the process dies.

Either way: the first account (committed before the kill) is whole, the killed account has
nothing partial, the settler leaves a running sync alone but moves the dead one to `failed`,
and the retry completes with every upstream row stored exactly once and every derived figure
(balance, balance series) right."""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from finance.models import Account, AccountBalance, Transaction
from providers.models import Sync
from providers.services import STUCK_ERROR, syncs_settle
from providers.testing.lunchflow_server import Fault
from tests.hardening.crash import (
    RowLock,
    child_sessions,
    sigkill,
    spawn,
    tables_written_by,
    wait_for,
    wait_sessions_gone,
)
from tests.providers.conftest import connect, day, run_sync

NEW_SAVINGS_ROWS = 150
CHILD_SYNC = """
from providers.tasks import provider_sync
print(provider_sync({sync_id!r}), flush=True)
"""


def _ledger(name: str) -> list[str]:
    return sorted(
        Transaction.objects.filter(account__name=name).values_list("external_id", flat=True)
    )


def _later() -> dt.datetime:
    return timezone.now() + dt.timedelta(minutes=django_settings.SYNC_STUCK_MINUTES + 1)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("moment", ["while fetching", "mid-write"])
def test_killed_sync_leaves_nothing_partial_and_recovers(
    moment, postgres_only, alice, lunchflow, settings
):
    # GIVEN a connection synced once: Checking (a1) and Savings (a2)
    scenario = lunchflow.scenario
    scenario.add_account("a1", "Checking", "EUR", "100")
    scenario.add_account("a2", "Savings", "EUR", "1000")
    scenario.add_transaction("a1", "c1", day(10), -5, "first")
    scenario.add_transaction("a2", "s1", day(10), -7, "first")
    connection = connect(alice)
    assert run_sync(connection).status == "completed"
    savings_before = _ledger("Savings")
    savings = Account.objects.get(name="Savings")

    # AND new upstream data for both accounts
    scenario.add_transaction("a1", "c2", day(2), -20, "new on checking")
    scenario.balances["a1"]["amount"] = "80"
    for n in range(NEW_SAVINGS_ROWS):
        scenario.add_transaction("a2", f"s-new-{n}", day(n % 30), -1, f"row {n}")
    scenario.balances["a2"]["amount"] = "850"

    asked_before = scenario.paths().count("/accounts/a2/transactions")
    lock = None
    if moment == "while fetching":
        scenario.faults["/accounts/a2/transactions"] = Fault(kind="slow", delay=60)
    else:
        # the sync updates the account row (reported balance) after inserting its rows
        lock = RowLock(Account._meta.db_table, savings.pk)
    # the pending Sync a queue would hand to a worker (the child process here)
    sync = Sync.objects.create(connection=connection)
    child = spawn(
        CHILD_SYNC.format(sync_id=str(sync.pk)),
        LUNCHFLOW_BASE_URL=lunchflow.base_url,
        LUNCHFLOW_INCLUDE_PENDING="true",
        PROVIDER_HTTP_TIMEOUT="120",
    )
    try:
        # WHEN the worker is killed in the middle of the second account
        if moment == "while fetching":
            # Savings is read while Checking is written (providers/sync/fetch.py): the kill
            # comes once Checking has committed and the read of Savings hangs
            wait_for(
                lambda: (
                    scenario.paths().count("/accounts/a2/transactions") > asked_before
                    and _ledger("Checking") == ["c1", "c2"]
                ),
                "the slow request for Savings, after Checking committed",
                child,
            )
        else:
            session = wait_for(
                lambda: next(
                    (
                        s
                        for s in child_sessions()
                        if s["wait_event_type"] == "Lock"
                        and Account._meta.db_table in (s["query"] or "")
                    ),
                    None,
                ),
                "the sync to block on the Savings row, mid-transaction",
                child,
            )
            assert Transaction._meta.db_table in tables_written_by(session["pid"])
        # a sync that is still running (fresh heartbeat) is not the settler's business
        assert syncs_settle() == 0
        assert Sync.objects.get(pk=sync.pk).status == "syncing"
        sigkill(child)
    finally:
        if child.poll() is None:
            sigkill(child)
        if lock is not None:
            lock.release()
        scenario.faults.clear()
    wait_sessions_gone()

    # THEN the first account committed whole, the killed one holds nothing new
    assert _ledger("Checking") == ["c1", "c2"]
    assert _ledger("Savings") == savings_before
    savings.refresh_from_db()
    assert savings.reported_balance == 1000
    # the sync still says `syncing`: only the settler knows better, once the heartbeat is old
    assert Sync.objects.get(pk=sync.pk).status == "syncing"
    assert syncs_settle(now=_later()) == 1
    settled = Sync.objects.get(pk=sync.pk)
    assert (settled.status, settled.error, settled.retryable) == ("failed", STUCK_ERROR, True)

    # AND a retry completes, every row exactly once, derived figures right
    retry = run_sync(connection)
    assert retry.status == "completed", retry.error
    assert _ledger("Checking") == ["c1", "c2"]
    expected = sorted(["s1", *(f"s-new-{n}" for n in range(NEW_SAVINGS_ROWS))])
    assert _ledger("Savings") == expected
    for name, balance in (("Checking", 80), ("Savings", 850)):
        account = Account.objects.get(name=name)
        assert account.reported_balance == balance
        assert account.balance == balance, f"{name}: balance not recomputed after the crash"
        latest = AccountBalance.objects.filter(account=account).order_by("-date").first()
        assert latest is not None and latest.balance == balance, name
        response = alice.client.get(f"/api/v1/accounts/{account.pk}")
        assert response.json()["balance"] == f"{balance}.00"
