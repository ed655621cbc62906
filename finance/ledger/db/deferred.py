"""A large insert on SQLite derives what its per-row triggers would, once per statement.

SQLite has no statement-level triggers: each row a bulk write inserts into the ledger ran
two trigger programs (its account's counter, row_counts.py; its place in the search queue,
search_sqlite.py) and each tag link one (its transaction's date, tag_dates.py). For 100,000
seeded rows the triggers took half the insert's time (about 10 of 20 s; the same derived by
set-based statements afterwards: 0.45 s; bench/README.md).

So an insert of at least `BULK` rows, inside its transaction, drops the table's insert
triggers, inserts, derives their effect for the new rows by one scan of them each, and creates
the triggers again. The new rows are those whose rowid is above the table's largest before
the insert (SQLite gives a new row the largest rowid plus one; one writer at a time). DDL is
transactional on SQLite: a failed or rolled-back write brings the triggers back with
everything else, and other connections never see them missing (they read committed state;
the write lock keeps other writers out). Nothing changes on PostgreSQL, whose counters are
statement-level triggers already and whose search index is the table's own.

An insert that at least doubles the ledger (a first import of a million rows) also drops the
two indexes whose keys it writes in random order, the amounts' and the external ids', and
creates them again after it: SQLite sorts a new index's keys once, where each row inserted
into it took a random page of an index outgrowing the page cache (a million rows into an
empty table 46.95 -> 21.29 s, into a million 47.72 -> 32.44 s; 200,000 into a million
10.30 -> 14.69 s, which is why it waits for a doubling; bench/README.md). The unique one is
dropped only for a plain INSERT, whose rows the caller has checked are new (an `ON CONFLICT`
needs the index to decide); a duplicate that slipped through fails the index's creation,
which fails the write as the INSERT itself would have. The planner's statistics of the two
(sqlite_stat1, where ANALYZE has run) are kept."""

# ruff: noqa: S608 - every statement is built from the modules' constant names, never input.
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction

from finance.ledger.db import row_counts, search_sqlite, tag_dates
from finance.ledger.db.triggers import Deferred

# Below this many rows the triggers run: dropping and creating them costs a few statements,
# and every connection prepares its statements again after a schema change.
BULK = 256
# An insert of at least this many rows, and of at least as many as the table held, rebuilds
# the random-order indexes after it.
REBUILD_MIN = 100_000
REBUILT_INDEXES = {
    row_counts.TABLE: ("txn_family_amount", "transaction_external_id_per_account_source"),
}
# Of those, the ones that decide an `ON CONFLICT`: kept for an insert that has one.
UNIQUE_INDEXES = frozenset({"transaction_external_id_per_account_source"})


def _deferred() -> dict[str, list[Deferred]]:
    found: dict[str, list[Deferred]] = {}
    for item in (*row_counts.SQLITE_INSERT, *search_sqlite.SQLITE_INSERT, *tag_dates.SQLITE_INSERT):
        found.setdefault(item.table, []).append(item)
    return found


def applies(table: str, rows: int | None) -> bool:
    """Whether an insert of `rows` (None: unknown, a statement's) into `table` goes deferred."""
    return (
        connection.vendor == "sqlite"
        and (rows is None or rows >= BULK)
        and table in (row_counts.TABLE, tag_dates.LINKS)
    )


@contextmanager
def triggers_deferred(
    table: str, rows: int | None = None, *, plain: bool = False
) -> Iterator[None]:
    """Run the body's insert into `table` without its per-row insert triggers (SQLite), then
    derive their work for the new rows. Only triggers that exist are deferred (the search
    index is absent where SQLite lacks FTS5; a trigger `migrate` dropped stays for
    `*_ensure` to repair). `rows`: how many the body inserts (None: not known), which may
    rebuild the random-order indexes after it; `plain`: the insert has no `ON CONFLICT`."""
    wanted = _deferred().get(table, [])
    with transaction.atomic(), connection.cursor() as cursor:
        names = [item.name for item in wanted]
        marks = ", ".join(["%s"] * len(names))
        cursor.execute(
            f"SELECT name FROM sqlite_master WHERE type = 'trigger' AND name IN ({marks})", names
        )
        present = {row[0] for row in cursor.fetchall()}
        active = [item for item in wanted if item.name in present]
        cursor.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}")
        bound = cursor.fetchone()[0]
        restore = _indexes_dropped(cursor, table, rows, bound, plain)
        for item in active:
            cursor.execute(f"DROP TRIGGER {item.name}")
        yield
        for sql, params in restore:
            cursor.execute(sql, params)
        for item in active:
            for sql in item.derive:  # the bound is every parameter of those that take one
                cursor.execute(sql, [bound] * sql.count("%s") or None)
            cursor.execute(item.create)


def _indexes_dropped(
    cursor: Any, table: str, rows: int | None, bound: int, plain: bool
) -> list[tuple[str, list[str] | None]]:
    """Drop the table's random-order indexes when an insert of `rows` is to at least double
    it (`bound`: its largest rowid, at least its row count); return the statements that
    create them again as they were, with their planner statistics."""
    names = [name for name in REBUILT_INDEXES.get(table, ()) if plain or name not in UNIQUE_INDEXES]
    if not names or rows is None or rows < REBUILD_MIN or rows < bound:
        return []
    marks = ", ".join(["%s"] * len(names))
    cursor.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = %s "
        f"AND name IN ({marks})",
        [table, *names],
    )
    definitions = cursor.fetchall()
    restore: list[tuple[str, list[str] | None]] = [(sql, None) for _, sql in definitions]
    cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'")
    if cursor.fetchone() and definitions:
        found = [name for name, _ in definitions]
        marks = ", ".join(["%s"] * len(found))
        cursor.execute(f"SELECT tbl, idx, stat FROM sqlite_stat1 WHERE idx IN ({marks})", found)
        restore += [
            ("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (%s, %s, %s)", list(stat))
            for stat in cursor.fetchall()
        ]
    for name, _ in definitions:
        cursor.execute(f'DROP INDEX "{name}"')
    return restore
