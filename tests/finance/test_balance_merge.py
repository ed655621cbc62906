"""A bulk of new rows on many days merges into a manual account's stored series
(finance/ledger/db/series.py `series_merge`): from the first new day on, each day's balance is
the stored one plus the new flows so far, read from the series, never from the ledger's rows.
The rows it leaves are exactly those a derivation from scratch gives; a batch that also deleted
rows, or whose rows reach the series' opening, is derived as before."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from finance.ledger import ledger_batch
from finance.models import Account, Transaction
from tests.factories import TransactionFactory
from tests.finance.test_balance_shift import _derived, _rows

pytestmark = pytest.mark.django_db

LEDGER_SUMS = 'FROM "finance_transaction"'  # a derivation sums the ledger's rows per day


def _bulk(household, account: Account, days: list[str], amount: str = "1.25", **extra) -> None:
    items = [
        {"account_id": str(account.pk), "date": day, "amount": amount, "name": "b", **extra}
        for day in days
    ]
    r = household.client.post("/api/v1/transactions/bulk", {"transactions": items}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["summary"]["created"] == len(items)


def _balance_reads(queries) -> list[str]:
    return [q["sql"] for q in queries if "SUM(" in q["sql"] and LEDGER_SUMS in q["sql"]]


@pytest.mark.parametrize("account_type", ["depository", "credit_card"])
def test_a_bulk_over_many_days_merges_into_the_series_as_a_derivation_would(alice, account_type):
    account = alice.account(account_type=account_type)
    _bulk(alice, account, [f"2024-03-{d:02d}" for d in range(1, 29, 3)], "10.00")
    before = _rows(account)
    # 40 days (more than move in place one by one): between stored days, on them, after the
    # last; some rows excluded (no flow), amounts of both signs.
    days = [(dt.date(2024, 3, 2) + dt.timedelta(days=i)).isoformat() for i in range(40)]
    with CaptureQueriesContext(connection) as queries:
        _bulk(alice, account, days, "-3.3333")
        _bulk(alice, account, days[::2], "7.5", excluded=True)
    assert _balance_reads(queries.captured_queries) == []
    account.refresh_from_db()
    rows, balance = _derived(account)
    assert _rows(account) == rows and account.balance == balance
    assert len(rows) > len(before)
    sign = -1 if account_type == "depository" else 1
    assert account.balance == sign * (Decimal("100.00") - Decimal("3.3333") * 40)


def test_rows_before_the_series_opening_are_derived_whole(alice):
    account = alice.account()
    _bulk(alice, account, [f"2024-05-{d:02d}" for d in range(1, 29)])
    with CaptureQueriesContext(connection) as queries:
        _bulk(alice, account, [f"2024-04-{d:02d}" for d in range(1, 29)])
    assert _balance_reads(queries.captured_queries)
    account.refresh_from_db()
    assert (_rows(account), account.balance) == _derived(account)
    assert _rows(account)[0] == (dt.date(2024, 3, 31), Decimal(0))


def test_a_batch_that_also_deleted_rows_is_derived(alice):
    account = alice.account()
    _bulk(alice, account, [f"2024-05-{d:02d}" for d in range(1, 29)])
    gone = Transaction.objects.filter(account=account, date=dt.date(2024, 5, 3))
    built = [
        TransactionFactory.build(account=account, family=alice.family, date=dt.date(2024, 6, d))
        for d in range(1, 29)
    ]
    with CaptureQueriesContext(connection) as queries, ledger_batch(family=alice.family) as batch:
        batch.delete(gone)
        batch.add([(txn, None) for txn in built])
    assert _balance_reads(queries.captured_queries)
    account.refresh_from_db()
    rows, balance = _derived(account)
    assert _rows(account) == rows and account.balance == balance
    assert dt.date(2024, 5, 3) not in dict(rows)


def _series_statements(queries) -> list[str]:
    return [q["sql"] for q in queries if '"finance_accountbalance"' in q["sql"]]


def _many(household, accounts: list[Account], days: list[str], amount: str) -> list[str]:
    items = [
        {"account_id": str(account.pk), "date": day, "amount": amount, "name": "b"}
        for account in accounts
        for day in days
    ]
    with CaptureQueriesContext(connection) as queries:
        r = household.client.post(
            "/api/v1/transactions/bulk", {"transactions": items}, format="json"
        )
    assert r.status_code == 200, r.content
    return _series_statements(queries.captured_queries)


def test_a_bulk_over_many_accounts_merges_them_in_the_statements_of_one(alice):
    """Five statements on the series for all the accounts a bulk merges, not four each; and
    each account's series still equals its derivation (assets and liabilities together)."""
    one = [alice.account()]
    four = [
        alice.account(account_type=t) for t in ("depository", "credit_card", "loan", "other_asset")
    ]
    _many(alice, one + four, [f"2024-03-{d:02d}" for d in range(1, 29, 3)], "10.00")
    days = [(dt.date(2024, 3, 2) + dt.timedelta(days=i)).isoformat() for i in range(40)]
    alone = _many(alice, one, days, "-3.3333")
    together = _many(alice, four, days, "2.5")
    assert len(together) == len(alone) and not _balance_reads([{"sql": s} for s in together])
    for account in one + four:
        account.refresh_from_db()
        assert (_rows(account), account.balance) == _derived(account)


def test_accounts_that_cannot_merge_are_derived_beside_those_that_merge(alice):
    merging, reaching, empty = alice.account(), alice.account(), alice.account()
    _many(alice, [merging, reaching], [f"2024-05-{d:02d}" for d in range(1, 29)], "4.00")
    items = [
        {"account_id": str(account.pk), "date": f"2024-{month}-{d:02d}", "amount": "1.5",
         "name": "b"}
        for account, month in ((merging, "06"), (reaching, "04"), (empty, "06"))
        for d in range(1, 29)
    ]  # fmt: skip
    r = alice.client.post("/api/v1/transactions/bulk", {"transactions": items}, format="json")
    assert r.status_code == 200, r.content
    for account in (merging, reaching, empty):
        account.refresh_from_db()
        assert (_rows(account), account.balance) == _derived(account)
    assert _rows(reaching)[0] == (dt.date(2024, 3, 31), Decimal(0))
    assert _rows(empty)[0] == (dt.date(2024, 5, 31), Decimal(0))
