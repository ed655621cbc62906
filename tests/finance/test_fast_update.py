"""Many rows updated, each with its own values, by one statement per 500 rows
(finance/ledger/db/fastupdate.py): every value comes back as the ORM's own save would have
stored it, NULL stays NULL, and rows not given are left alone."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from finance.ledger.db import fastupdate
from finance.ledger.db.fastupdate import fast_update
from finance.models import Transaction
from tests.factories import MerchantFactory, TransactionFactory

pytestmark = pytest.mark.django_db

FIELDS = [
    "amount", "date", "name", "notes", "merchant", "pending", "provider_snapshot",
    "provider_snapshot_hash", "updated_at",
]  # fmt: skip


def _stored(pk) -> tuple:
    return Transaction.objects.filter(pk=pk).values_list(*FIELDS).get()


def test_each_row_gets_its_own_values_of_every_type(alice, monkeypatch):
    monkeypatch.setattr(fastupdate, "BATCH", 2)  # three rows: two statements
    account = alice.account()
    shop = MerchantFactory(family=alice.family, name="Shop")
    rows = [
        TransactionFactory(account=account, notes="old", provider_snapshot={"a": 1})
        for _ in range(3)
    ]
    untouched = TransactionFactory(account=account, name="Left alone")
    before = _stored(untouched.pk)
    when = dt.datetime(2026, 11, 30, 12, 30, tzinfo=dt.UTC)
    for i, txn in enumerate(rows):
        txn.amount = Decimal("1234567.8901") * (-1 if i else 1)
        txn.date = dt.date(2026, 1, 1 + i)
        txn.name = f"Bäcker {i} 'quoted'"
        txn.notes = None if i == 1 else f"note {i}"
        txn.merchant = shop if i == 2 else None
        txn.pending = bool(i % 2)
        txn.provider_snapshot = None if i == 0 else {"n": i, "list": [1, "x"], "none": None}
        txn.provider_snapshot_hash = f"h{i}"
        txn.updated_at = when
    with CaptureQueriesContext(connection) as queries:
        assert fast_update(Transaction, FIELDS, rows) == 3
    assert sum("FROM (VALUES" in q["sql"] for q in queries.captured_queries) == 2
    for i, txn in enumerate(rows):
        got = _stored(txn.pk)
        assert got == (
            Decimal("1234567.8901") * (-1 if i else 1),
            dt.date(2026, 1, 1 + i),
            f"Bäcker {i} 'quoted'",
            None if i == 1 else f"note {i}",
            shop.pk if i == 2 else None,
            bool(i % 2),
            None if i == 0 else {"n": i, "list": [1, "x"], "none": None},
            f"h{i}",
            when,
        ), i
    # a JSON None is SQL NULL, as the ORM stores it, not the JSON literal null
    assert Transaction.objects.filter(pk=rows[0].pk, provider_snapshot__isnull=True).exists()
    assert _stored(untouched.pk) == before


def test_nothing_to_update_runs_no_statement(alice):
    with CaptureQueriesContext(connection) as queries:
        assert fast_update(Transaction, ["name"], []) == 0
    assert not queries.captured_queries
