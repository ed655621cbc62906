"""SQLite: a large insert's row counts and search-index entries are derived by one scan of the
new rows, found by their rowid range (finance/ledger/db/row_counts.py, search_sqlite.py). With
the planner's statistics of a large ledger, SQLite walked the household-amount index for the
counts instead and fetched each row from the table by it: at 1,000,000 new rows 7 s against
0.5 s for the range (bench/README.md)."""

from __future__ import annotations

import pytest
from django.db import connection

from finance.ledger.db import row_counts, search_sqlite
from tests.factories import TransactionFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's deferred triggers"),
]


def _large_ledger_statistics(cursor) -> None:
    """sqlite_stat1 as ANALYZE leaves it on a 1M-row ledger of a few households: the planner
    then sees an index scan as cheap as reading the new rows' range."""
    cursor.execute("ANALYZE")
    cursor.execute("DELETE FROM sqlite_stat1 WHERE tbl = %s", [row_counts.TABLE])
    cursor.execute(
        "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (%s, NULL, '1000000')",
        [row_counts.TABLE],
    )
    cursor.execute(
        "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (%s, 'txn_family_amount', "
        "'1000000 500000 2')",
        [row_counts.TABLE],
    )
    cursor.execute("ANALYZE sqlite_schema")  # load the statistics written above


def _new_row_steps() -> list[str]:
    """Every deferred statement that reads the ledger's new rows by rowid, whole."""
    steps = [*row_counts.SQLITE_INSERT, *search_sqlite.SQLITE_INSERT]
    found = [
        sql
        for step in steps
        if step.table == row_counts.TABLE
        for sql in step.derive
        if "rowid > %s" in sql
    ]
    # the counts', the search queue's, the search index's entries and its state
    assert len(found) == 4, found
    return found


@pytest.mark.parametrize(
    "statement", _new_row_steps(), ids=["counts", "search-queue", "search-index", "search-state"]
)
def test_the_new_rows_are_read_by_their_rowid_range(alice, statement):
    for _ in range(3):
        TransactionFactory(account=alice.account())
    params = [0] * statement.count("%s")
    with connection.cursor() as cursor:
        for step in row_counts.SQLITE_INSERT:  # the counts' staging table
            for sql in step.derive:
                if sql.startswith("CREATE TEMPORARY"):
                    cursor.execute(sql)
        _large_ledger_statistics(cursor)
        try:
            cursor.execute(f"EXPLAIN QUERY PLAN {statement}", params)
            plan = [str(row[-1]) for row in cursor.fetchall()]
        finally:  # the connection forgets them (the test's rollback would not unload them)
            cursor.execute("DELETE FROM sqlite_stat1")
            cursor.execute("ANALYZE sqlite_schema")
        ledger = [line for line in plan if f"{row_counts.TABLE} " in f"{line} "]
        assert ledger, plan
        for line in ledger:  # every read of the ledger: its new rows' range, no index
            assert "USING INTEGER PRIMARY KEY (rowid>?)" in line, plan
        if statement.lstrip().startswith("SELECT"):
            cursor.execute(statement, params)
            rows = cursor.fetchall()
            assert (sum(row[-1] for row in rows) if "GROUP BY" in statement else len(rows)) == 3
