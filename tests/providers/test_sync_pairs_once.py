"""A sync pairs transfers once, over every account it wrote (finance/ledger/after.py,
`PairsLater`): each account is still its own ledger batch, but the transfer search runs after
the last of them, also when an account failed, and a run taking over from a lost runner pairs
what that runner wrote."""

from __future__ import annotations

import pytest
from django.db import connection as db
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from finance.ledger import PairsLater
from finance.models import Transaction, Transfer
from providers.base import adapter_for
from providers.http import ProviderHttp
from providers.models import Sync
from providers.sync.engine import account_sync, empty_stats, provider_accounts_upsert
from providers.tasks import provider_sync
from providers.testing.lunchflow_server import Fault
from tests.providers.conftest import connect, day, run_sync


@pytest.fixture
def bank(lunchflow):
    """Checking pays 50.00 to savings (which receives it the next day) and 12.30 to a shop;
    a third account, a card, has one unrelated row."""
    s = lunchflow.scenario
    s.add_account("chk", "Checking", "EUR", "100")
    s.add_account("sav", "Savings", "EUR", "50")
    s.add_account("card", "Card", "EUR", "-5")
    s.add_transaction("chk", "out", day(3), -50, "TO SAVINGS")
    s.add_transaction("chk", "shop", day(2), -12.3, "SHOP")
    s.add_transaction("sav", "in", day(2), 50, "FROM CHECKING")
    s.add_transaction("card", "coffee", day(1), -3.2, "COFFEE")
    return lunchflow


def _pair(alice) -> tuple[str, str] | None:
    transfer = Transfer.objects.filter(family=alice.family).first()
    if transfer is None:
        return None
    return transfer.outflow_transaction.external_id, transfer.inflow_transaction.external_id


def _searches(queries) -> int:
    """Transfer-matching passes: each starts by reading the pending suggestions it may drop."""
    return sum('"finance_transfer"."status" =' in q["sql"] for q in queries.captured_queries)


@pytest.mark.django_db
def test_a_sync_of_three_accounts_searches_for_transfers_once_and_pairs_across_them(alice, bank):
    connection = connect(alice)
    with CaptureQueriesContext(db) as queries:
        sync = run_sync(connection)
    assert sync.status == Sync.Status.COMPLETED, sync.error
    assert _searches(queries) == 1
    assert _pair(alice) == ("out", "in")
    kinds = dict(Transaction.objects.values_list("external_id", "kind"))
    assert kinds["in"] == Transaction.Kind.FUNDS_MOVEMENT
    assert kinds["shop"] == kinds["coffee"] == Transaction.Kind.STANDARD
    # unchanged: the next sync finds the pair taken and suggests nothing twice
    assert run_sync(connection).status == Sync.Status.COMPLETED
    assert Transfer.objects.filter(family=alice.family).count() == 1


@pytest.mark.django_db
def test_accounts_written_before_another_fails_are_still_paired(alice, bank):
    bank.scenario.faults["/accounts/card/transactions"] = Fault(status=500)
    sync = run_sync(connect(alice))
    assert sync.status == Sync.Status.FAILED
    assert [f["name"] for f in sync.stats["failed_accounts"]] == ["Card"]
    assert _pair(alice) == ("out", "in")
    assert not Transaction.objects.filter(external_id="coffee").exists()


@pytest.mark.django_db(transaction=True)
def test_a_takeover_pairs_what_the_lost_runner_wrote(alice, bank):
    connection = connect(alice)
    # A runner writes every account (each its own committed batch), then dies before its
    # pairing pass: the rows are in the ledger, unpaired.
    today = timezone.now().date()
    adapter = adapter_for(connection, http=ProviderHttp(label="Lunch Flow"))
    accounts = provider_accounts_upsert(connection=connection, upstream=adapter.list_accounts())
    start, end = adapter.sync_window(connection=connection, today=today)
    lost = PairsLater()
    for pa in accounts:
        account_sync(
            adapter=adapter, pa=pa, start=start, end=end, today=today, stats=empty_stats(),
            pairs_later=lost,
        )  # fmt: skip
    assert Transaction.objects.filter(family=alice.family).count() == 4
    assert _pair(alice) is None
    orphan = Sync.objects.create(
        connection=connection, status=Sync.Status.SYNCING, started_at=timezone.now()
    )
    # The broker hands the task out again: every row comes back unchanged, and the run pairs
    # the accounts over its whole window.
    assert provider_sync(str(orphan.pk)) == f"sync {orphan.pk} completed"
    orphan.refresh_from_db()
    assert orphan.stats["transactions_added"] == 0
    assert _pair(alice) == ("out", "in")
