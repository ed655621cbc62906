"""SQLite's search index keeps no copy of the texts (finance/ledger/db/search_sqlite.py): it
forgets a row only when told the very texts it indexed, so every edit and delete must hand it
the old row's. Checked against the ledger itself, and an index made by an earlier version
(with its own copy of the texts) is replaced by `search_index_ensure`."""

from __future__ import annotations

import pytest
from django.db import connection

from finance.ledger.db.search_sqlite import (
    FTS,
    MAP,
    MATCH_SQL,
    TRIGGERS,
    phrase,
    search_index_catch_up,
    search_index_drop,
    search_index_ensure,
)
from finance.models import Transaction
from tests.factories import TransactionFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 index"),
]
TERMS = ["coffee", "COFFEE BAR", "tea", "note", "old", "new", "lunch", "e n", "ffe"]


def matches(term: str) -> set[str]:
    """The transactions the index finds for `term` (MATCH alone, no fallback)."""
    search_index_catch_up(connection)
    with connection.cursor() as cursor:
        cursor.execute(MATCH_SQL, [phrase(term)])
        return {str(Transaction._meta.pk.to_python(row[0])) for row in cursor.fetchall()}


def scanned(term: str) -> set[str]:
    """The transactions whose stored name or notes contain `term`, any case."""
    low = term.lower()
    return {
        str(pk)
        for pk, name, notes in Transaction.objects.values_list("id", "name", "notes")
        if low in name.lower() or low in (notes or "").lower()
    }


def integrity_check() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {FTS} ({FTS}) VALUES ('integrity-check')")


def test_edits_and_deletes_leave_the_index_equal_to_the_ledger(alice):
    account = alice.account()
    rows = [
        TransactionFactory(account=account, name=name, notes=notes)
        for name, notes in [
            ("Coffee bar", None),
            ("Tea house", "old note"),
            ("Lunch", ""),
            ("Coffee beans", "coffee bar run"),
            ("Rent", None),
        ]
    ]
    search_index_catch_up(connection)  # indexed: what follows must forget the old texts
    queued = TransactionFactory(account=account, name="Queued coffee", notes="old")
    Transaction.objects.filter(pk=rows[0].pk).update(name="New tea")
    Transaction.objects.filter(pk=rows[1].pk).update(notes=None)
    Transaction.objects.filter(pk=rows[2].pk).update(notes="new lunch note")
    Transaction.objects.filter(pk=rows[3].pk).update(name="Coffee Bar", notes="tea")
    Transaction.objects.filter(pk=queued.pk).update(name="Queued tea")  # before it is indexed
    Transaction.objects.filter(pk__in=[rows[4].pk]).delete()
    rows[3].refresh_from_db()
    Transaction.objects.filter(pk=rows[3].pk).update(name="Coffee Bar")  # the same text again
    for term in TERMS:
        assert matches(term) == scanned(term), term
    integrity_check()
    Transaction.objects.filter(account=account).delete()
    assert all(matches(term) == set() for term in TERMS)
    integrity_check()


def test_an_index_with_its_own_copy_of_the_texts_is_replaced(alice):
    account = alice.account()
    kept = TransactionFactory(account=account, name="Coffee before")
    search_index_drop()
    with connection.cursor() as cursor:  # the shape every earlier version made
        cursor.execute(f"CREATE VIRTUAL TABLE {FTS} USING fts5(name, notes, tokenize='trigram')")
        cursor.execute(
            f"CREATE TABLE {MAP} (id INTEGER PRIMARY KEY AUTOINCREMENT, txn_id char(32) NOT NULL "
            "UNIQUE)"
        )
        cursor.execute(
            f"""CREATE TRIGGER {TRIGGERS[2]} AFTER DELETE ON finance_transaction BEGIN
                DELETE FROM {FTS} WHERE rowid = (SELECT id FROM {MAP} WHERE txn_id = old.id);
            END"""
        )
    assert search_index_ensure()
    with connection.cursor() as cursor:
        cursor.execute("SELECT sql FROM sqlite_master WHERE name = %s", [FTS])
        assert "content=''" in cursor.fetchone()[0]
    assert matches("coffee") == {str(kept.pk)}
    Transaction.objects.filter(pk=kept.pk).update(name="Tea after")  # the new triggers work
    TransactionFactory(account=account, name="Coffee after")
    assert matches("coffee") == scanned("coffee") and len(scanned("coffee")) == 1
    assert matches("tea after") == {str(kept.pk)}
    integrity_check()


def test_ledger_check_reports_an_index_missing_a_row_and_fix_rebuilds_it(alice):
    from io import StringIO

    from django.core.management import CommandError, call_command

    account = alice.account()
    lost = TransactionFactory(account=account, name="Coffee lost")
    TransactionFactory(account=account, name="Coffee kept")
    search_index_catch_up(connection)
    with connection.cursor() as cursor:  # the index forgets a row the map still holds
        cursor.execute(
            f"INSERT INTO {FTS} ({FTS}, rowid, name, notes) SELECT 'delete', id, %s, '' "
            f"FROM {MAP} WHERE txn_id = %s",
            ["Coffee lost", lost.pk.hex],
        )
    assert matches("coffee") != scanned("coffee")
    with pytest.raises(CommandError, match="difference"):
        call_command("ledger_check", stdout=StringIO())
    out = StringIO()
    call_command("ledger_check", "--fix", stdout=out)
    assert "the search index holds 1 rows of 2" in out.getvalue()
    assert matches("coffee") == scanned("coffee") and len(scanned("coffee")) == 2
