"""A large ledger batch refreshes the planner's statistics of the ledger table at its close
(PostgreSQL; finance/ledger/batch.py, ANALYZE_ABOVE): the row count and the columns the reads
filter by, not the free texts and JSON (docs/decisions.md, "Ledger indexes")."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest
from django.db import connection

from finance.ledger import batch as batch_module
from finance.ledger import ledger_batch

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL's ANALYZE"),
]

NAMES = ("id", "family", "account", "date", "amount", "currency", "name", "provider_snapshot")


def _stats() -> tuple[float, set[str]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'finance_transaction'")
        rows = cursor.fetchone()[0]
        cursor.execute("SELECT attname FROM pg_stats WHERE tablename = 'finance_transaction'")
        return rows, {name for (name,) in cursor.fetchall()}


def _write(hh, account, count: int) -> None:
    day = dt.date(2024, 1, 1)
    rows = [
        (uuid.uuid4(), hh.family.pk, account.pk, day, Decimal(i), "USD", f"Row {i}", {"i": i})
        for i in range(count)
    ]
    with ledger_batch(family=hh.family) as batch:
        batch.write_values(NAMES, rows)


def test_a_large_batch_refreshes_the_counts_and_the_read_columns(alice, monkeypatch):
    monkeypatch.setattr(batch_module, "ANALYZE_ABOVE", 40)
    account = alice.account()
    with connection.cursor() as cursor:  # the statistics as a fresh table has them
        cursor.execute("DELETE FROM pg_statistic WHERE starelid = 'finance_transaction'::regclass")
    _write(alice, account, 39)  # below the threshold: nothing is analyzed
    assert _stats()[1] == set()
    _write(alice, account, 40)
    rows, columns = _stats()
    assert rows >= 79
    assert {"family_id", "account_id", "date", "amount", "external_id"} <= columns
    assert not columns & {"name", "notes", "provider_snapshot", "edited_fields", "rule_changes"}
