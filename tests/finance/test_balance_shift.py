"""A create or a delete moves a manual account's balance series in place
(finance/ledger/db/series.py): the rows it leaves are exactly the rows a derivation from scratch
gives, wherever the day falls (after the series, inside it, on or before its opening row, in
1900; a delete emptying a day, the first day, the last), for assets and liabilities, on both
databases."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from finance.ledger import ledger_batch
from finance.models import Account, AccountBalance

pytestmark = pytest.mark.django_db


class _Rollback(Exception):
    pass


def _rows(account: Account) -> list[tuple]:
    return list(
        AccountBalance.objects.filter(account=account)
        .order_by("date")
        .values_list("date", "balance")
    )


def _derived(account: Account) -> tuple[list[tuple], object]:
    """The rows and balance a derivation from scratch gives (rolled back)."""
    out: dict = {}
    try:
        with transaction.atomic():
            with ledger_batch(family=account.family) as batch:
                batch.touch(account.family, account.pk, None)
            out["rows"] = _rows(account)
            out["balance"] = Account.objects.get(pk=account.pk).balance
            raise _Rollback
    except _Rollback:
        pass
    return out["rows"], out["balance"]


def _create(household, account_id: str, date: str, amount: str) -> str:
    body = {"account_id": account_id, "date": date, "amount": amount, "name": "t"}
    r = household.client.post("/api/v1/transactions", {"transaction": body}, format="json")
    assert r.status_code == 201, r.content
    return r.json()["id"]


def _same_as_derived(account: Account, step: object) -> list[tuple]:
    account.refresh_from_db()
    rows, balance = _derived(account)
    assert _rows(account) == rows, step
    assert account.balance == balance, step
    return rows


@pytest.mark.parametrize("account_type", ["depository", "credit_card"])
def test_creates_anywhere_in_time_leave_the_rows_a_derivation_gives(alice, account_type):
    r = alice.client.post(
        "/api/v1/accounts",
        {"account": {"name": "A", "currency": "USD", "account_type": account_type}},
        format="json",
    )
    assert r.status_code == 201, r.content
    account = Account.objects.get(pk=r.json()["id"])
    steps = [
        ("2024-05-10", "10.00"),  # the first row: derived whole
        ("2024-06-01", "-2.5000"),  # after the series
        ("2024-05-20", "1.25"),  # inside it, on a day without a row
        ("2024-06-01", "4.00"),  # on a day with a row
        ("2024-05-09", "3.00"),  # on the opening row's day
        ("2024-05-01", "0.00"),  # before the opening row, a zero flow
        ("1900-01-01", "9999999999999.9999"),  # 1900, the largest amount
        ("1900-01-01", "-0.0001"),
        ("2026-11-25", "7.77"),
    ]
    ids = {}
    for date, amount in steps:
        ids[(date, amount)] = _create(alice, str(account.pk), date, amount)
        rows = _same_as_derived(account, (date, amount))
    assert rows[0][0].isoformat() == "1899-12-31"  # the opening row moved to 1900's eve
    # Deleted in an order that empties days inside the series, its first days and its last.
    for step in [steps[i] for i in (2, 6, 3, 7, 5, 4, 8, 0, 1)]:
        r = alice.client.delete(f"/api/v1/transactions/{ids[step]}")
        assert r.status_code in (200, 204), r.content
        rows = _same_as_derived(account, ("delete", step))
    assert rows == [] and account.balance == 0


def test_a_create_after_the_opening_row_leaves_the_opening_alone(alice):
    """Only rows added, all after the opening row: no day lost its last row and the series
    starts where it did, so the opening is not looked for again (no delete, no ledger read),
    and the series takes three statements."""
    account = alice.account()
    _create(alice, str(account.pk), "2024-05-10", "10.00")
    _create(alice, str(account.pk), "2024-06-10", "1.00")
    with CaptureQueriesContext(connection) as queries:
        _create(alice, str(account.pk), "2024-05-20", "2.50")
    series = [q["sql"] for q in queries.captured_queries if "finance_accountbalance" in q["sql"]]
    assert not [sql for sql in series if sql.startswith("DELETE")], series
    # the opening, the last row and the stored days at once; the day's row; the UPDATE
    assert [sql.split()[0] for sql in series] == ["SELECT", "INSERT", "UPDATE"], series
    _same_as_derived(account, "inside")
    with CaptureQueriesContext(connection) as queries:
        _create(alice, str(account.pk), "2024-05-09", "1.00")  # on the opening row's day
    assert [q for q in queries.captured_queries if q["sql"].startswith("DELETE")]
    _same_as_derived(account, "opening")


@pytest.mark.parametrize("account_type", ["depository", "credit_card"])
def test_a_bulk_on_a_few_days_moves_the_series_in_place(alice, account_type):
    """A bulk whose rows fall on a few days after the opening moves the series day by day: a
    new day's row carries the balance before it, including the earlier days' moves of the
    same bulk, and the account's balance is the last row's moved by every flow."""
    account = alice.account(account_type=account_type)
    _create(alice, str(account.pk), "2024-05-10", "10.00")
    _create(alice, str(account.pk), "2024-05-20", "1.25")
    days = [
        ("2024-05-12", "2.00"),  # a new day inside the series
        ("2024-05-12", "0.50"),  # the same day again
        ("2024-05-20", "-4.00"),  # a stored day
        ("2024-05-25", "3.3333"),  # a new day after the last
        ("2024-05-15", "-0.0001"),  # a new day between two new ones
    ]
    items = [
        {"account_id": str(account.pk), "date": day, "amount": amount, "name": "b"}
        for day, amount in days
    ]
    with CaptureQueriesContext(connection) as queries:
        r = alice.client.post("/api/v1/transactions/bulk", {"transactions": items}, format="json")
    assert r.status_code == 200 and r.json()["summary"]["created"] == 5, r.content
    series = [q["sql"] for q in queries.captured_queries if "finance_accountbalance" in q["sql"]]
    assert not [sql for sql in series if sql.startswith("DELETE")], series
    rows = _same_as_derived(account, "bulk")
    sign = -1 if account_type == "depository" else 1
    assert account.balance == sign * Decimal("13.0832")
    assert rows[-1] == (dt.date(2024, 5, 25), account.balance)


def test_the_balance_moved_in_place_stays_exact_past_28_digits(alice):
    """The account's balance after a create is summed in the ledger's wide context, as the
    database adds (a stored series near the column's 38 digits: what a restore may bring)."""
    account = alice.account()
    _create(alice, str(account.pk), "2024-05-10", "10.00")
    big = Decimal("1234567890123456789012345678901.2345")
    AccountBalance.objects.filter(account=account).update(balance=big)
    _create(alice, str(account.pk), "2024-05-20", "0.0001")
    account.refresh_from_db()
    moved = Decimal("1234567890123456789012345678901.2344")  # exact: 35 digits
    assert account.balance == moved == _rows(account)[-1][1]


def _patch(household, pk: str, **fields) -> None:
    r = household.client.patch(f"/api/v1/transactions/{pk}", {"transaction": fields}, format="json")
    assert r.status_code == 200, r.content


@pytest.mark.parametrize("account_type", ["depository", "credit_card"])
def test_edits_move_the_series_as_a_derivation_would(alice, account_type):
    """An edit of a row's amount, day, account or exclusion moves both days' flows in place
    (as a delete and a create): the rows left are a derivation's, whatever day it empties or
    the opening it moves; an amount edit reads no ledger sum."""
    account, other = alice.account(account_type=account_type), alice.account()
    first = _create(alice, str(account.pk), "2024-05-10", "10.00")
    middle = _create(alice, str(account.pk), "2024-05-20", "1.25")
    _create(alice, str(account.pk), "2024-06-01", "-2.50")
    with CaptureQueriesContext(connection) as queries:
        _patch(alice, middle, amount="7.7700")
    sums = [q["sql"] for q in queries.captured_queries if "SUM(" in q["sql"]]
    assert sums == [], sums
    _same_as_derived(account, "amount")
    steps = [
        (middle, {"date": "2024-05-25"}),  # empties its old day, fills a new one
        (middle, {"date": "2024-05-09"}),  # onto the opening row's day: the opening moves
        (first, {"date": "2024-04-01", "amount": "-3.00"}),  # before the opening
        (first, {"excluded": True}),  # the first row excluded: the opening moves later
        (first, {"excluded": False, "amount": "0.01"}),
        (middle, {"account_id": str(other.pk)}),  # to another account
        (middle, {"account_id": str(account.pk), "date": "2024-06-01"}),  # back, onto a row
        (first, {"name": "renamed"}),  # no flow moves
    ]
    for pk, fields in steps:
        _patch(alice, pk, **fields)
        _same_as_derived(account, fields)
        _same_as_derived(other, fields)
