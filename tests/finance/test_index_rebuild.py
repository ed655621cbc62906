"""An insert that at least doubles the ledger rebuilds its random-order indexes after it on
SQLite (finance/ledger/db/deferred.py): the indexes come back exactly as they were, with
their planner statistics, and keep deciding what they decided (the unique external id); an
insert with an `ON CONFLICT` keeps the unique one; a smaller insert drops none; a duplicate
that slipped past a plain insert fails the write and leaves nothing. On PostgreSQL nothing is
dropped. The threshold is lowered so that a few hundred rows stand for a million."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from finance.ledger.db import deferred
from finance.ledger.db.fastinsert import fast_insert
from finance.models import Transaction
from tests.factories import TransactionFactory
from tests.imports.statement_helpers import publish, uploaded

pytestmark = pytest.mark.django_db

D = dt.date(2024, 5, 1)
N = 300
NAMES = ("id", "family", "account", "date", "amount", "currency", "name", "external_id", "source")
UNIQUE = "transaction_external_id_per_account_source"
AMOUNTS = "txn_family_amount"
sqlite_only = pytest.mark.skipif(
    "connection.vendor != 'sqlite'", reason="PostgreSQL keeps its indexes"
)


@pytest.fixture
def low_threshold(monkeypatch):
    monkeypatch.setattr(deferred, "REBUILD_MIN", N // 2)


def rows(household, account, n: int, tag: str = "r") -> list[tuple]:
    return [
        (uuid.uuid4(), household.family.pk, account.pk, D + dt.timedelta(days=i % 30),
         f"{(i * 37) % 500 - 250}.25", "USD", f"row {i}", f"{tag}-{i}", "api")
        for i in range(n)
    ]  # fmt: skip


def definitions() -> dict[str, str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = %s",
                ["finance_transaction"],
            )
        else:
            cursor.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s",
                ["finance_transaction"],
            )
        return dict(cursor.fetchall())


def dropped(queries: CaptureQueriesContext) -> set[str]:
    return {
        q["sql"].split('"')[1]
        for q in queries.captured_queries
        if q["sql"].startswith("DROP INDEX")
    }


def test_the_rebuilt_indexes_are_the_models_own():
    """A rename in a migration would leave the rebuild silently doing nothing: the names
    must be those the models declare."""
    meta = Transaction._meta
    declared = {i.name for i in meta.indexes} | {c.name for c in meta.constraints}
    assert set(deferred.REBUILT_INDEXES["finance_transaction"]) <= declared
    assert set(deferred.REBUILT_INDEXES["finance_transaction"]) >= deferred.UNIQUE_INDEXES
    assert set(deferred.REBUILT_INDEXES["finance_transaction"]) <= set(definitions())


def test_an_insert_doubling_the_ledger_rebuilds_both_indexes_as_they_were(alice, low_threshold):
    account = alice.account()
    TransactionFactory(
        family=alice.family, account=account, amount="2", external_id="old", source="api"
    )
    before = definitions()
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("ANALYZE")
            cursor.execute("SELECT idx, stat FROM sqlite_stat1 WHERE idx IN (%s, %s)",
                           [UNIQUE, AMOUNTS])  # fmt: skip
            stats = dict(cursor.fetchall())
    with CaptureQueriesContext(connection) as queries:
        fast_insert(Transaction, NAMES, rows(alice, account, N))
    expected = {UNIQUE, AMOUNTS} if connection.vendor == "sqlite" else set()
    assert dropped(queries) == expected
    assert definitions() == before
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("SELECT idx, stat FROM sqlite_stat1 WHERE idx IN (%s, %s)",
                           [UNIQUE, AMOUNTS])  # fmt: skip
            assert dict(cursor.fetchall()) == stats and len(stats) == 2
    assert Transaction.objects.filter(account=account).count() == N + 1
    # the unique index decides again: the same external id is refused
    with pytest.raises(IntegrityError), transaction.atomic():
        fast_insert(Transaction, NAMES, rows(alice, account, 1))
    # and the amounts' index answers its range
    assert Transaction.objects.filter(family=alice.family, amount__lt=-240).count() == sum(
        1 for row in rows(alice, account, N) if Decimal(row[4]) < -240
    )


@sqlite_only
def test_an_insert_not_doubling_the_ledger_keeps_the_indexes(alice, low_threshold):
    account = alice.account()
    fast_insert(Transaction, NAMES, rows(alice, account, N, "first"))
    with CaptureQueriesContext(connection) as queries:
        fast_insert(Transaction, NAMES, rows(alice, account, N - 1, "second"))
    assert dropped(queries) == set()
    with CaptureQueriesContext(connection) as queries:
        fast_insert(Transaction, NAMES, rows(alice, account, N // 2 - 1, "small"))
    assert dropped(queries) == set()  # below the threshold, into a ledger it doubles
    assert Transaction.objects.count() == 2 * N - 1 + N // 2 - 1


def test_a_bulk_create_keeps_the_unique_index_its_conflicts_need(alice, low_threshold):
    account = alice.account()
    items = [
        {"account_id": str(account.pk), "date": D.isoformat(), "amount": f"{i + 1}.00",
         "name": f"item {i}", "external_id": f"bulk-{i}"}
        for i in range(N)
    ]  # fmt: skip
    with CaptureQueriesContext(connection) as queries:
        r = alice.client.post("/api/v1/transactions/bulk", {"transactions": items}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["summary"]["created"] == N
    assert dropped(queries) == ({AMOUNTS} if connection.vendor == "sqlite" else set())
    again = alice.client.post(
        "/api/v1/transactions/bulk", {"transactions": items[:3]}, format="json"
    ).json()
    assert again["summary"]["created"] == 0
    assert [item["status"] for item in again["results"]] == [200, 200, 200]


def test_a_duplicate_past_a_plain_insert_fails_it_and_leaves_the_indexes(alice, low_threshold):
    account = alice.account()
    before = definitions()
    batch = rows(alice, account, N)
    batch.append((uuid.uuid4(), *batch[5][1:]))  # another key, the same external id
    # COPY (PostgreSQL) raises the driver's own error, executemany Django's
    with pytest.raises((IntegrityError, connection.Database.IntegrityError)), transaction.atomic():
        fast_insert(Transaction, NAMES, batch)
    assert definitions() == before
    assert Transaction.objects.count() == 0


def test_a_large_import_publishes_through_the_rebuild_and_its_reimport_is_marked(
    alice, low_threshold, django_capture_on_commit_callbacks
):
    account = alice.account(currency="USD")
    lines = ["date,name,amount"] + [
        f"2024-{1 + i % 12:02d}-{1 + i % 28:02d},Shop {i},-{1 + i % 900}.25" for i in range(N)
    ]
    content = ("\n".join(lines) + "\n").encode()
    before = definitions()
    first = uploaded(
        alice.client, content, "a.csv", "TransactionImport", account_id=str(account.pk)
    )
    with CaptureQueriesContext(connection) as queries:
        done = publish(alice.client, first["id"], django_capture_on_commit_callbacks)
    assert done["status"] == "complete"
    assert dropped(queries) == ({UNIQUE, AMOUNTS} if connection.vendor == "sqlite" else set())
    assert definitions() == before
    assert Transaction.objects.filter(account=account).count() == N
    again = uploaded(
        alice.client, content, "b.csv", "TransactionImport", account_id=str(account.pk)
    )
    assert again["stats"]["duplicates_count"] == N
    assert publish(alice.client, again["id"], django_capture_on_commit_callbacks)["status"] == (
        "complete"
    )
    assert Transaction.objects.filter(account=account).count() == N
