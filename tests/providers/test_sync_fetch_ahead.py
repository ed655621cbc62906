"""A sync reads each account while the one before it is written (providers/sync/fetch.py):
the provider sees the same requests, in the same order, one at a time; a refused key stops
the reading at once; an account whose read fails does not stop the next one's."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import pytest

from finance.ledger import ledger_batch
from finance.models import Account, Transaction
from providers.models import ProviderConnection, Sync
from providers.sync.apply import snapshot_digest, transactions_apply
from providers.sync.fetch import FetchAhead, account_fetch, ledger_currency
from providers.testing.lunchflow_server import Fault
from providers.types import ProviderError, UpstreamTransaction
from tests.providers.conftest import connect, day, run_sync


@pytest.fixture
def three(lunchflow):
    s = lunchflow.scenario
    for acc in ("a1", "a2", "a3"):
        s.add_account(acc, f"Account {acc}", "EUR", "10")
        s.add_transaction(acc, f"{acc}-t", day(2), -1, f"ROW {acc}")
    return lunchflow


def _paths(server) -> list[str]:
    return [r["path"] for r in server.scenario.requests if r["path"].startswith("/accounts/")]


@pytest.mark.django_db
def test_the_requests_are_the_ones_a_sync_in_turn_makes_in_its_order(alice, three):
    sync = run_sync(connect(alice))
    assert sync.status == Sync.Status.COMPLETED
    assert _paths(three) == [
        f"/accounts/{acc}/{what}"
        for acc in ("a1", "a2", "a3")
        for what in ("balance", "transactions", "holdings")
    ]
    assert Transaction.objects.filter(family=alice.family).count() == 3


@pytest.mark.django_db
def test_a_refused_key_reads_no_further_account(alice, three):
    three.scenario.faults["/accounts/a2/balance"] = Fault(status=401)
    connection = connect(alice)
    sync = run_sync(connection)
    connection.refresh_from_db()
    assert sync.status == Sync.Status.FAILED
    assert connection.status == ProviderConnection.Status.REQUIRES_UPDATE
    assert not any("/a3/" in path for path in _paths(three))
    # the account read and written before the refusal keeps its rows
    assert list(Transaction.objects.values_list("external_id", flat=True)) == ["a1-t"]


@pytest.mark.django_db
def test_an_account_whose_read_fails_leaves_the_next_one_read_and_written(alice, three):
    three.scenario.faults["/accounts/a1/transactions"] = Fault(status=500)
    sync = run_sync(connect(alice))
    assert sync.status == Sync.Status.FAILED
    assert [f["name"] for f in sync.stats["failed_accounts"]] == ["Account a1"]
    assert sorted(Transaction.objects.values_list("external_id", flat=True)) == ["a2-t", "a3-t"]


class _Adapter:
    """A stand-in adapter for FetchAhead alone: records each account it is asked about."""

    supports_holdings = False

    def __init__(self, refuse: str) -> None:
        self.asked: list[str] = []
        self.refuse = refuse

    def balance(self, upstream_id: str):
        self.asked.append(upstream_id)
        if upstream_id == self.refuse:
            raise ProviderError("refused", requires_update=True)
        return None

    def transactions(self, upstream_id: str, start, end) -> list:
        return []


def test_fetch_ahead_reads_the_next_account_and_none_after_a_refused_key():
    accounts = [
        SimpleNamespace(
            upstream_id=f"a{n}", holdings_supported=None, account_id=None, currency="EUR"
        )
        for n in (1, 2, 3)
    ]
    adapter = _Adapter(refuse="a2")
    window = (dt.date(2026, 1, 1), dt.date(2026, 1, 31))
    with FetchAhead(adapter, accounts, window) as ahead:
        assert ahead.take(0).rows == []
        # taking an account starts the next one's read, while the caller writes this one
        ahead._pool.submit(lambda: None).result()  # one worker: whatever was queued has run
        assert adapter.asked == ["a1", "a2"]
        with pytest.raises(ProviderError, match="refused"):
            ahead.take(1)
        ahead._pool.submit(lambda: None).result()  # one worker: whatever was queued has run
    assert adapter.asked == ["a1", "a2"]


@pytest.mark.django_db
def test_the_rows_are_prepared_where_they_are_read_for_the_ledger_accounts_currency(alice, three):
    """The reading thread also keys and digests the rows (`rows_prepare`) for the currency of
    the ledger account they go to; a write whose account is in another currency by then
    prepares them again, so a row without its own currency takes the account's."""
    connection = connect(alice)
    run_sync(connection)
    pa = connection.accounts.get(upstream_id="a1")
    data = account_fetch(_Rows(), pa, dt.date(2026, 1, 1), dt.date(2026, 1, 31), "EUR")
    assert data.prepared is not None and data.prepared.currency == "EUR"
    assert list(data.prepared.keyed) == ["r1", "r2"] and data.prepared.skipped == 1
    assert data.prepared.digests["r1"] == snapshot_digest(data.prepared.keyed["r1"][1])

    account = pa.account
    Account.objects.filter(pk=account.pk).update(currency="USD")
    account.refresh_from_db()
    with ledger_batch(family=alice.family) as batch:
        result = transactions_apply(
            batch=batch, account=account, source="lunchflow", rows=data.rows,
            today=dt.date(2026, 1, 31), prepared=data.prepared,
        )  # fmt: skip
    assert result.added == 2 and result.notes == ["1 upstream rows out of range were skipped"]
    stored = Transaction.objects.filter(account=account, external_id__in=["r1", "r2"])
    assert sorted(stored.values_list("external_id", "currency")) == [("r1", "USD"), ("r2", "GBP")]


class _Rows:
    """An adapter whose account holds two storable rows (one without a currency) and one
    dated past what the ledger stores."""

    supports_holdings = False

    def balance(self, upstream_id: str):
        return None

    def transactions(self, upstream_id: str, start, end) -> list:
        return [
            UpstreamTransaction("r1", dt.date(2026, 1, 5), Decimal("3.50"), "", "Coffee"),
            UpstreamTransaction("r2", dt.date(2026, 1, 6), Decimal("9.00"), "GBP", "Books"),
            UpstreamTransaction("r3", dt.date(10000 - 1, 1, 1), Decimal("1.00"), "", "Far"),
        ]


@pytest.mark.django_db
def test_the_currency_rows_are_prepared_for(alice, three):
    connection = connect(alice)
    pa = connection.accounts.get(upstream_id="a1")
    assert pa.account_id is None and ledger_currency(pa) == "EUR"  # the account it will create
    pa.currency = ""
    assert ledger_currency(pa) == alice.family.currency == "USD"
    run_sync(connection)
    pa = connection.accounts.get(upstream_id="a1")
    Account.objects.filter(pk=pa.account_id).update(currency="CHF")
    assert ledger_currency(connection.accounts.get(upstream_id="a1")) == "CHF"
    # its account deleted after the sync read it: nothing is prepared ahead for it
    stale = connection.accounts.get(upstream_id="a1")
    Account.objects.filter(pk=stale.account_id).delete()
    assert ledger_currency(stale) is None
