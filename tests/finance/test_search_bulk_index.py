"""A large insert's rows are indexed for search in the same breath on SQLite, numbered by
their rowid order instead of joined back by key (finance/ledger/db/search_sqlite.py,
SQLITE_INSERT): each row is found under its own id, the index agrees with the ledger, and rows
queued before (by a write outside a ledger batch) send the insert's rows the catch-up's way,
which finds them all as well."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.db import connection, transaction

from finance.ledger.db import deferred
from finance.ledger.db.fastinsert import fast_insert
from finance.ledger.db.search_sqlite import (
    FTS,
    MAP,
    STATE,
    search_index_catch_up,
    search_index_ensure,
)
from finance.models import Transaction
from tests.factories import TransactionFactory
from tests.finance.test_search_contentless import integrity_check, matches

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 index"),
]
NAMES = ("id", "family", "account", "date", "amount", "currency", "name", "notes")
D = dt.date(2024, 5, 1)


def queue() -> tuple[int, int]:
    """(indexed up to, largest queued) of the search index's map."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT indexed_upto, (SELECT max(id) FROM {MAP}) FROM {STATE}")
        return cursor.fetchone()


def insert(household, account, n: int, tag: str) -> list[uuid.UUID]:
    rows = [
        (uuid.uuid4(), household.family.pk, account.pk, D, "-1.00", "USD",
         f"{tag}{i:04d}{tag}", f"memo{tag}{i:04d}" if i % 3 == 0 else None)
        for i in range(n)
    ]  # fmt: skip
    fast_insert(Transaction, NAMES, rows)
    return [row[0] for row in rows]


def found_each(tag: str, ids: list[uuid.UUID]) -> None:
    for i in (0, 1, 2, 3, len(ids) // 2, len(ids) - 1):
        assert matches(f"{tag}{i:04d}{tag}") == {str(ids[i])}
        if i % 3 == 0:
            assert matches(f"memo{tag}{i:04d}") == {str(ids[i])}


def test_a_large_insert_is_indexed_at_once_each_row_under_its_own_id(alice):
    account = alice.account()
    earlier = insert(alice, account, 5, "zqa")  # small: through the triggers
    search_index_catch_up(connection)
    n = deferred.BULK + 21
    with transaction.atomic():
        ids = insert(alice, account, n, "zqb")
        done, queued = queue()
        assert done == queued  # indexed in the insert's own statements
    found_each("zqb", ids)
    assert matches("zqa0003zqa") == {str(earlier[3])}
    assert matches("zqb") == {str(i) for i in ids}
    integrity_check()


def test_rows_queued_before_leave_a_large_insert_to_the_catch_up(alice):
    account = alice.account()
    outside = TransactionFactory(family=alice.family, account=account, name="zqcoutsidezqc")
    done, queued = queue()
    assert done < queued  # queued by the trigger, not yet indexed
    with transaction.atomic():
        ids = insert(alice, account, deferred.BULK + 3, "zqd")
        done, queued = queue()
        assert done < queued
    found_each("zqd", ids)
    assert matches("zqcoutsidezqc") == {str(outside.pk)}
    assert queue()[0] == queue()[1]
    integrity_check()


def hashsize() -> int | None:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT v FROM {FTS}_config WHERE k = 'hashsize'")
        row = cursor.fetchone()
    return row and row[0]


def test_the_index_buffers_a_large_write_in_memory_and_ensure_gives_an_older_index_it(alice):
    assert hashsize() == 32 * 1024 * 1024  # the migration made the index with it
    with connection.cursor() as cursor:  # an index made before the setting
        cursor.execute(f"DELETE FROM {FTS}_config WHERE k = 'hashsize'")
    assert hashsize() is None
    assert search_index_ensure() is True
    assert hashsize() == 32 * 1024 * 1024
    ids = insert(alice, alice.account(), deferred.BULK + 5, "zqe")
    found_each("zqe", ids)
    integrity_check()
