"""Issue 6 sync rules, each against the fake Lunch Flow server over real HTTP."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from finance.models import Account, Merchant, Transaction
from providers.models import ProviderAccount, ProviderConnection
from tests.factories import CategoryFactory, TagFactory
from tests.providers.conftest import connect, day, run_sync


def rows(account_id: str | None = None):
    qs = Transaction.objects.order_by("date", "external_id")
    if account_id:
        qs = qs.filter(account__provider_accounts__upstream_id=account_id)
    return list(qs)


@pytest.fixture
def checking(lunchflow):
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "1500.25")
    return lunchflow.scenario


def test_first_sync_creates_the_ledger_account_and_stores_rows_with_source_and_id(alice, checking):
    checking.add_transaction("a1", "t1", day(3), -12.5, "Coffee beans", "Roastery")
    connection = connect(alice)
    sync = run_sync(connection)
    assert sync.status == "completed", sync.error
    account = Account.objects.get(family=alice.family)
    assert (account.name, account.currency, account.account_type) == (
        "Checking",
        "EUR",
        "depository",
    )
    assert account.reported_balance == Decimal("1500.25")
    assert account.reported_balance_at is not None
    (txn,) = rows()
    assert (txn.source, txn.external_id, txn.amount) == ("lunchflow", "t1", Decimal("12.5"))
    assert txn.merchant == Merchant.objects.get(family=alice.family, name="Roastery")
    assert txn.name == "Coffee beans" and txn.provider_snapshot["id"] == "t1"
    connection.refresh_from_db()
    assert connection.status == "good" and connection.last_synced_at is not None
    assert sync.stats["transactions_added"] == 1 and sync.stats["accounts_seen"] == 1
    assert sync.stats["requests_made"] == 4  # accounts, balance, transactions, holdings


def test_a_linked_account_is_used_and_a_skipped_one_is_left_out(alice, checking):
    checking.add_account("a2", "Card", "EUR", "0")
    checking.add_transaction("a1", "t1", day(3), -1, "x")
    checking.add_transaction("a2", "c1", day(3), -2, "y")
    connection = connect(alice)
    mine = alice.account(name="My checking", currency="EUR")
    ProviderAccount.objects.filter(upstream_id="a1").update(account=mine)
    ProviderAccount.objects.filter(upstream_id="a2").update(skipped=True)
    sync = run_sync(connection)
    assert sync.status == "completed"
    assert [t.account_id for t in rows()] == [mine.pk]
    assert Account.objects.filter(family=alice.family).count() == 1


def test_pending_rows_are_stored_with_the_pending_flag(alice, checking):
    checking.add_transaction("a1", "p1", day(1), -7, "Lunch", pending=True)
    sync = run_sync(connect(alice))
    (txn,) = rows()
    assert txn.pending is True and sync.stats["transactions_pending"] == 1


def test_pending_rows_are_not_asked_for_when_the_setting_is_off(alice, checking, settings):
    settings.LUNCHFLOW_INCLUDE_PENDING = False
    checking.add_transaction("a1", "p1", day(1), -7, "Lunch", pending=True)
    checking.add_transaction("a1", "t1", day(2), -9, "Dinner")
    run_sync(connect(alice))
    assert [t.external_id for t in rows()] == ["t1"]
    txn_queries = [r["query"] for r in checking.requests if r["path"].endswith("transactions")]
    assert all("include_pending" not in q for q in txn_queries)


def test_pending_to_posted_under_the_same_id_refreshes_and_keeps_user_edits(alice, checking):
    row = checking.add_transaction("a1", "p1", day(2), -7, "CARD AUTH CAFE", "Cafe", True)
    connection = connect(alice)
    run_sync(connection)
    txn = rows()[0]
    category, tag = CategoryFactory(family=alice.family), TagFactory(family=alice.family)
    txn.category, txn.notes, txn.name = category, "with Bob", "Coffee with Bob"
    txn.save()
    txn.tags.add(tag)

    row.update(isPending=False, description="CAFE POSTED", date=day(1), amount=-7.5)
    sync = run_sync(connection)
    txn.refresh_from_db()
    assert txn.pending is False
    assert txn.provider_snapshot["pending"] is False
    assert txn.provider_snapshot["name"] == "CAFE POSTED"
    assert (txn.amount, txn.date.isoformat()) == (Decimal("7.5"), day(1))
    assert (txn.category, txn.notes, txn.name) == (category, "with Bob", "Coffee with Bob")
    assert list(txn.tags.all()) == [tag]
    assert sync.stats["transactions_updated"] == 1 and len(rows()) == 1


def test_an_unedited_name_follows_upstream(alice, checking):
    row = checking.add_transaction("a1", "p1", day(2), -7, "CARD AUTH", pending=True)
    connection = connect(alice)
    run_sync(connection)
    row.update(isPending=False, description="Posted name")
    run_sync(connection)
    assert rows()[0].name == "Posted name"


def _identical(scenario, count: int, txn_id: str = "") -> None:
    for _ in range(count):
        scenario.add_transaction("a1", txn_id, day(1), -3.5, "Coffee", "Cafe", pending=True)


@pytest.mark.parametrize("count", [2, 3])
def test_identical_blank_id_rows_keep_their_own_slots_over_several_syncs(alice, checking, count):
    _identical(checking, count)
    connection = connect(alice)
    first = run_sync(connection)
    keys = sorted(t.external_id for t in rows())
    assert len(keys) == count and len(set(keys)) == count
    assert first.stats["transactions_added"] == count
    for _ in range(3):
        again = run_sync(connection)
        assert sorted(t.external_id for t in rows()) == keys
        assert again.stats["transactions_added"] == 0
        assert again.stats["transactions_unchanged"] == count


def test_one_of_three_identical_rows_posting_under_a_real_id(alice, checking):
    _identical(checking, 3)
    connection = connect(alice)
    run_sync(connection)
    edited = Transaction.objects.get(external_id__endswith=":2")
    category = CategoryFactory(family=alice.family)
    edited.category = category
    edited.save()

    checking.transactions["a1"].pop()
    checking.add_transaction("a1", "real-1", day(0), -3.5, "Coffee", "Cafe", pending=False)
    sync = run_sync(connection)
    assert sync.status == "completed"
    stored = rows()
    assert len(stored) == 3
    posted = Transaction.objects.get(external_id="real-1")
    assert posted.category == category and not posted.pending  # the edits moved to it
    assert not Transaction.objects.filter(pk=edited.pk).exists()  # the pending row went
    assert sorted(t.external_id.rsplit(":", 1)[1] for t in stored if t.pending) == ["0", "1"]
    for _ in range(2):
        again = run_sync(connection)
        assert len(rows()) == 3 and again.stats["transactions_added"] == 0


def test_a_vanished_pending_row_is_taken_over_by_its_posted_version(alice, checking):
    checking.add_transaction("a1", "pend-9", day(6), -42, "HOTEL AUTH", pending=True)
    connection = connect(alice)
    run_sync(connection)
    pending = rows()[0]
    category = CategoryFactory(family=alice.family)
    pending.category, pending.notes = category, "trip"
    pending.save()

    checking.transactions["a1"].clear()
    checking.add_transaction("a1", "post-9", day(1), -42, "HOTEL")
    sync = run_sync(connection)
    (txn,) = rows()
    assert txn.external_id == "post-9" and not txn.pending and txn.pending_settled
    assert (txn.category, txn.notes) == (category, "trip")
    assert sync.stats["transactions_added"] == 1 and sync.stats["transactions_updated"] == 1
    assert sync.stats["transactions_removed"] == 1  # the pending row, deleted


def test_a_posted_row_too_far_from_the_pending_one_does_not_take_it_over(alice, checking):
    checking.add_transaction("a1", "pend", day(12), -42, "AUTH", pending=True)
    connection = connect(alice)
    run_sync(connection)
    checking.transactions["a1"].clear()
    checking.add_transaction("a1", "post", day(1), -42, "POSTED")
    run_sync(connection)
    assert sorted(t.external_id for t in rows()) == ["pend", "post"]


def test_a_vanished_stale_pending_row_is_excluded_not_deleted(alice, checking, settings):
    settings.SYNC_STALE_PENDING_DAYS = 5
    checking.add_transaction("a1", "old", day(7), -10, "Old auth", pending=True)
    checking.add_transaction("a1", "young", day(2), -11, "Young auth", pending=True)
    connection = connect(alice)
    run_sync(connection)
    checking.transactions["a1"].clear()
    sync = run_sync(connection)
    by_id = {t.external_id: t for t in rows()}
    assert by_id["old"].excluded is True and by_id["old"].pending is True
    assert by_id["young"].excluded is False
    assert sync.stats["transactions_removed"] == 1
    assert run_sync(connection).stats["transactions_removed"] == 0


def test_an_unchanged_resync_writes_nothing(alice, checking, django_assert_max_num_queries):
    for n in range(30):
        checking.add_transaction("a1", f"t{n}", day(n), -n - 1, f"Row {n}", f"M{n % 4}")
    _identical(checking, 2)
    connection = connect(alice)
    run_sync(connection)
    before = {t.pk: (t.updated_at, t.provider_snapshot) for t in rows()}
    account = Account.objects.get(family=alice.family)

    with django_assert_max_num_queries(40) as captured:  # bulk reads: not one per row
        sync = run_sync(connection)
    # the stored rows are compared by their snapshots alone, not read whole
    by_key = [q["sql"] for q in captured.captured_queries if '"external_id" IN (' in q["sql"]]
    assert by_key and not any('"finance_transaction"."name"' in q for q in by_key), by_key
    stats = sync.stats
    assert stats["transactions_added"] == stats["transactions_updated"] == 0
    assert stats["transactions_removed"] == 0 and stats["transactions_unchanged"] == 32
    assert {t.pk: (t.updated_at, t.provider_snapshot) for t in rows()} == before
    assert Account.objects.get(pk=account.pk).updated_at == account.updated_at


def test_a_failing_account_is_left_as_it_was_and_the_others_sync(alice, checking):
    from providers.testing.lunchflow_server import Fault

    checking.add_account("a2", "Savings", "EUR", "10")
    checking.add_transaction("a1", "t1", day(3), -1, "x")
    checking.add_transaction("a2", "s1", day(3), -2, "y")
    connection = connect(alice)
    run_sync(connection)
    savings = Account.objects.get(name="Savings")
    before = [(t.pk, t.updated_at) for t in rows("a2")]

    checking.add_transaction("a1", "t2", day(1), -3, "new")
    checking.add_transaction("a2", "s2", day(1), -4, "new")
    checking.balances["a2"]["amount"] = "99"
    checking.faults["/accounts/a2/transactions"] = Fault(status=502)
    sync = run_sync(connection)
    assert sync.status == "failed"
    assert "Savings" in sync.error and "1 of 2 accounts" in sync.error
    assert [f["name"] for f in sync.stats["failed_accounts"]] == ["Savings"]
    assert sync.retryable is True
    assert [(t.pk, t.updated_at) for t in rows("a2")] == before
    assert Account.objects.get(pk=savings.pk).reported_balance == Decimal("10")
    assert [t.external_id for t in rows("a1")] == ["t1", "t2"]

    del checking.faults["/accounts/a2/transactions"]
    recovered = run_sync(connection)
    assert recovered.status == "completed"
    assert [t.external_id for t in rows("a2")] == ["s1", "s2"]
    assert Account.objects.get(pk=savings.pk).reported_balance == Decimal("99")


def test_a_failure_inside_the_write_rolls_the_account_back(alice, checking, monkeypatch):
    checking.add_transaction("a1", "t1", day(3), -1, "x")
    connection = connect(alice)
    run_sync(connection)
    checking.add_transaction("a1", "t2", day(1), -2, "y")
    checking.balances["a1"]["amount"] = "1"

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("finance.ledger.batch.LedgerBatch.reported_balance", boom)
    sync = run_sync(connection)
    assert sync.status == "failed" and "internal error" in sync.error
    assert [t.external_id for t in rows()] == ["t1"]  # t2 was written, then rolled back


def test_401_during_a_sync_sets_requires_update(alice, checking):
    connection = connect(alice)
    checking.api_keys.clear()
    sync = run_sync(connection)
    connection.refresh_from_db()
    assert sync.status == "failed" and sync.retryable is False
    assert connection.status == ProviderConnection.Status.REQUIRES_UPDATE
    assert "401" in connection.error


def test_ledger_derives_for_touched_accounts_only(alice, checking, monkeypatch):
    checking.add_account("a2", "Savings", "EUR", "10")
    checking.add_transaction("a1", "t1", day(3), -1, "x")
    connection = connect(alice)
    run_sync(connection)
    calls = []
    monkeypatch.setattr(
        "finance.ledger.batch.derive",
        lambda *, family, account_dates, **_: calls.append(dict(account_dates)),
    )
    checking.add_transaction("a1", "t2", day(2), -1, "y")
    run_sync(connection)
    checking_account = Account.objects.get(name="Checking")
    assert calls == [{checking_account.pk: dt.date.fromisoformat(day(2))}]


def test_holdings_501_marks_the_account_and_it_is_not_asked_again(alice, checking):
    connection = connect(alice)
    run_sync(connection)
    assert ProviderAccount.objects.get().holdings_supported is False
    asked = len([p for p in checking.paths() if p.endswith("/holdings")])
    run_sync(connection)
    assert len([p for p in checking.paths() if p.endswith("/holdings")]) == asked == 1


def test_the_credential_is_encrypted_at_rest(alice, checking):
    connection = connect(alice, key="test-key")
    stored = ProviderConnection.objects.filter(pk=connection.pk).values_list(
        "credential_encrypted", flat=True
    )[0]
    assert "test-key" not in stored
    assert ProviderConnection.objects.get(pk=connection.pk).credential == "test-key"
    assert "test-key" not in repr(connection)


def test_the_window_reads_history_then_overlaps_the_last_good_sync(alice, checking, settings):
    settings.LUNCHFLOW_HISTORY_DAYS = 90
    settings.SYNC_OVERLAP_DAYS = 10
    connection = connect(alice)
    first = run_sync(connection)
    today = timezone.now().date()
    assert (first.window_start, first.window_end) == (today - dt.timedelta(days=90), today)
    second = run_sync(connection)
    assert second.window_start == today - dt.timedelta(days=10)
    query = [r["query"] for r in checking.requests if r["path"].endswith("/transactions")][-1]
    assert (query["from"], query["to"]) == (second.window_start.isoformat(), today.isoformat())


def test_holdings_are_handed_to_trades_and_make_the_new_account_an_investment(
    alice, checking, monkeypatch
):
    checking.add_account("b1", "Brokerage", "USD", "500")
    checking.holdings["b1"] = [
        {
            "security": {"name": "Apple", "tickerSymbol": "AAPL", "currency": "USD"},
            "quantity": 2,
            "price": 250,
            "value": 500,
            "costBasis": 300,
            "currency": "USD",
        }
    ]
    connection = connect(alice)
    sync = run_sync(connection)
    assert sync.status == "completed"
    brokerage = Account.objects.get(name="Brokerage")
    assert brokerage.account_type == "investment"
    holdings = alice.client.get("/api/v1/holdings", {"account_id": str(brokerage.id)}).json()
    assert [(h["security"]["ticker"], h["qty"]) for h in holdings["holdings"]] == [("AAPL", "2")]
    assert run_sync(connection).status == "completed"  # a re-sync replaces, never duplicates
    again = alice.client.get("/api/v1/holdings", {"account_id": str(brokerage.id)}).json()
    assert len(again["holdings"]) == 1
    assert Account.objects.get(name="Checking").account_type == "depository"
    assert ProviderAccount.objects.get(upstream_id="b1").holdings_supported is True


def test_a_credential_that_cannot_be_decrypted_asks_for_a_new_one(alice, checking, settings):
    connection = connect(alice)
    settings.FIELD_ENCRYPTION_KEY = "a different passphrase"
    sync = run_sync(connection)
    connection.refresh_from_db()
    assert sync.status == "failed" and "decrypted" in sync.error
    assert connection.status == "requires_update"


def test_the_demo_scenario_syncs_end_to_end(alice, settings, monkeypatch):
    from providers.testing.lunchflow_server import FakeLunchFlow, demo_scenario

    server = FakeLunchFlow(demo_scenario()).start()
    try:
        settings.LUNCHFLOW_BASE_URL = server.base_url
        settings.LUNCHFLOW_INCLUDE_PENDING = True
        connection = connect(alice, key="demo-key")
        sync = run_sync(connection)
        assert sync.status == "completed", sync.error
        assert sync.stats["transactions_added"] == 6 and sync.stats["transactions_pending"] == 2
        assert run_sync(connection).stats["transactions_unchanged"] == 6
    finally:
        server.stop()
