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
statement-level triggers already and whose search index is the table's own."""

# ruff: noqa: S608 - every statement is built from the modules' constant names, never input.
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction

from finance.ledger.db import row_counts, search_sqlite, tag_dates
from finance.ledger.db.triggers import Deferred

# Below this many rows the triggers run: dropping and creating them costs a few statements,
# and every connection prepares its statements again after a schema change.
BULK = 256


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
def triggers_deferred(table: str) -> Iterator[None]:
    """Run the body's insert into `table` without its per-row insert triggers (SQLite), then
    derive their work for the new rows. Only triggers that exist are deferred (the search
    index is absent where SQLite lacks FTS5; a trigger `migrate` dropped stays for
    `*_ensure` to repair)."""
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
        for item in active:
            cursor.execute(f"DROP TRIGGER {item.name}")
        yield
        for item in active:
            for sql in item.derive:  # the bound is the parameter of those that take one
                cursor.execute(sql, [bound] if "%s" in sql else None)
            cursor.execute(item.create)
