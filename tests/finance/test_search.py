"""`?search=`: the same answers on both databases, through the indexes each one has (trigram GIN
on PostgreSQL, an FTS5 trigram table kept by triggers on SQLite)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection

from finance.ledger.db.search_sqlite import TRIGGERS, search_index_ensure, search_index_ready
from finance.models import Transaction
from tests.factories import MerchantFactory, TransactionFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/transactions"


def names(client, term: str) -> list[str]:
    r = client.get(URL, {"search": term, "per_page": 100})
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["pagination"]["total_count"] == len(body["transactions"])
    return sorted(t["name"] for t in body["transactions"])


def test_substring_of_name_or_notes_any_case_own_household_only(alice, charlie):
    account = alice.account()
    TransactionFactory(account=account, name="Blue Bottle Coffee")
    TransactionFactory(account=account, name="Rent", notes="coffee machine share")
    TransactionFactory(account=account, name="Salary")
    TransactionFactory(account=charlie.account(), name="Bob's coffee")
    assert names(alice.client, "COFFEE") == ["Blue Bottle Coffee", "Rent"]
    assert names(alice.client, "ottle co") == ["Blue Bottle Coffee"]
    assert names(alice.client, "coffee machine") == ["Rent"]
    assert names(alice.client, "tea") == []


def test_merchant_name_and_short_terms(alice):
    account = alice.account()
    shop = MerchantFactory(family=alice.family, name="Corner Deli")
    TransactionFactory(account=account, name="Card 1234", merchant=shop)
    TransactionFactory(account=account, name="Ox tail")
    assert names(alice.client, "deli") == ["Card 1234"]
    assert names(alice.client, "ox") == ["Ox tail"]  # two letters: no trigram, still found
    assert names(alice.client, "x") == ["Ox tail"]


def test_quotes_and_wildcards_are_literal(alice):
    account = alice.account()
    TransactionFactory(account=account, name='The "Best" 100% shop_1')
    TransactionFactory(account=account, name="The Best 1000 shopX1")
    assert names(alice.client, '"Best"') == ['The "Best" 100% shop_1']
    assert names(alice.client, "100%") == ['The "Best" 100% shop_1']
    assert names(alice.client, "shop_1") == ['The "Best" 100% shop_1']


def test_edits_and_deletes_are_searched_at_once(alice):
    account = alice.account()
    txn = TransactionFactory(account=account, name="Groceries", date=dt.date(2024, 1, 2))
    assert names(alice.client, "grocer") == ["Groceries"]
    r = alice.client.put(
        f"{URL}/{txn.pk}",
        {"transaction": {"name": "Pharmacy", "notes": "cough syrup"}},
        format="json",
    )
    assert r.status_code == 200, r.content
    assert names(alice.client, "grocer") == []
    assert names(alice.client, "pharma") == ["Pharmacy"]
    assert names(alice.client, "syrup") == ["Pharmacy"]
    Transaction.objects.filter(pk=txn.pk).update(notes=None)  # one column at a time
    assert names(alice.client, "syrup") == []
    Transaction.objects.filter(pk=txn.pk).update(name="Chemist")
    assert names(alice.client, "pharma") == []
    assert names(alice.client, "chemist") == ["Chemist"]
    assert alice.client.delete(f"{URL}/{txn.pk}").status_code in (200, 204)
    assert names(alice.client, "chemist") == []


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 index")
def test_sqlite_index_is_rebuilt_when_a_table_rebuild_dropped_its_triggers(alice):
    assert search_index_ready(connection)
    account = alice.account()
    TransactionFactory(account=account, name="Indexed coffee")
    with connection.cursor() as cursor:
        for name in TRIGGERS:
            cursor.execute(f"DROP TRIGGER {name}")
    TransactionFactory(account=account, name="Unindexed coffee")
    assert not search_index_ready(connection)
    assert names(alice.client, "coffee") == ["Indexed coffee", "Unindexed coffee"]  # scans
    assert search_index_ensure()
    assert search_index_ready(connection)
    assert names(alice.client, "coffee") == ["Indexed coffee", "Unindexed coffee"]
    TransactionFactory(account=account, name="New coffee")
    assert names(alice.client, "coffee") == ["Indexed coffee", "New coffee", "Unindexed coffee"]


def test_rows_edited_or_deleted_before_they_were_indexed(alice):
    account = alice.account()
    edited = TransactionFactory(account=account, name="Old name")
    gone = TransactionFactory(account=account, name="Gone soon")
    Transaction.objects.filter(pk=edited.pk).update(name="New name")
    Transaction.objects.filter(pk=gone.pk).delete()
    assert names(alice.client, "old name") == []
    assert names(alice.client, "new name") == ["New name"]
    assert names(alice.client, "gone soon") == []


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 index")
def test_sqlite_inserts_are_queued_then_indexed_in_one_statement(alice):
    from finance.ledger.db.search_sqlite import FTS, search_index_catch_up

    def indexed() -> int:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {FTS}")
            return cursor.fetchone()[0]

    search_index_catch_up(connection)
    before = indexed()
    account = alice.account()
    for i in range(5):
        TransactionFactory(account=account, name=f"Queued {i}")
    assert indexed() == before  # queued by the trigger, not indexed row by row
    assert search_index_catch_up(connection) == 5
    assert indexed() == before + 5
    assert search_index_catch_up(connection) == 0


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 index")
def test_migrate_puts_dropped_triggers_back_while_the_index_migration_is_applied(alice):
    from django.core.management.sql import emit_post_migrate_signal
    from django.db.migrations.recorder import MigrationRecorder

    def drop_triggers() -> None:
        with connection.cursor() as cursor:
            for name in TRIGGERS:
                cursor.execute(f"DROP TRIGGER {name}")

    recorder = MigrationRecorder(connection)
    drop_triggers()  # what a table rebuild by a later migration does
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    assert search_index_ready(connection)
    drop_triggers()
    recorder.record_unapplied("finance", "0004_transaction_search_sqlite")  # migrated back
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    assert not search_index_ready(connection)


def test_search_pages_count_their_matches_in_the_page_query(alice, charlie):
    """Every page of a search gives the same exact total. Where an index answers the search it
    comes with the page (a window over the matches), so the matches are not read a second time
    by a COUNT(*), nor a third time to read the page's rows."""
    from django.test.utils import CaptureQueriesContext

    account = alice.account()
    for i in range(7):
        TransactionFactory(account=account, name=f"Corner bakery {i}", date=dt.date(2024, 1, 1 + i))
    TransactionFactory(account=account, name="Rent")
    TransactionFactory(account=charlie.account(), name="Corner bakery abroad")
    seen = []
    for page in (1, 2, 3, 4):
        with CaptureQueriesContext(connection) as ctx:
            r = alice.client.get(URL, {"search": "bakery", "per_page": 2, "page": page})
        body = r.json()
        assert body["pagination"]["total_count"] == 7, page
        assert body["pagination"]["total_pages"] == 4
        seen += [t["name"] for t in body["transactions"]]
        sqls = [q["sql"] for q in ctx.captured_queries]
        if connection.vendor == "postgresql" or search_index_ready(connection):
            assert [q for q in sqls if "SELECT COUNT(" in q.upper()] == [], page
            # the matches are sorted and counted once, as narrow rows without the page's
            # joins; the page's rows are then read by key, not matched again
            (windowed,) = [q for q in sqls if " OVER (" in q]
            assert '"name"' not in windowed.split("FROM")[0], windowed
            assert not any(t in windowed for t in ("finance_account", "finance_merchant")), windowed
            matched = [q for q in sqls if "LIKE" in q.upper() or " MATCH " in q.upper()]
            assert [q for q in matched if 'FROM "finance_merchant"' not in q] == [windowed]
    assert seen == [f"Corner bakery {i}" for i in range(6, -1, -1)]
    # past the last page the count is asked for separately
    r = alice.client.get(URL, {"search": "bakery", "per_page": 2, "page": 9})
    assert r.json()["pagination"]["total_count"] == 7 and r.json()["transactions"] == []
