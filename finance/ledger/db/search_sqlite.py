"""`?search=` on SQLite: an FTS5 trigram index of transactions' name and notes.

PostgreSQL has trigram GIN indexes (migration 0003); on SQLite a substring search was a scan of
the household's whole ledger (LIKE '%x%'). Here an FTS5 table with the `trigram` tokenizer
answers searches of three characters or more; it is contentless (it keeps no copy of the texts,
so it is told the old ones to forget a row). Triggers on `finance_transaction` queue each new
row in a map table (which also gives it a stable FTS rowid: SQLite's own rowid of a table with
a UUID key may change on VACUUM) and apply edits and deletes of indexed rows at once; queued
rows are indexed in one set-based statement by `search_index_catch_up`, which runs when every
ledger batch closes (finance/ledger/batch.py) and before every search, so a search never misses
a row.

Django rebuilds a SQLite table when a migration alters it, which drops its triggers, so
`search_index_ensure` runs after every `migrate`: it recreates missing triggers and then
rebuilds the index from the ledger. Where SQLite lacks FTS5 or the trigram tokenizer (before
3.34), nothing is created and search stays a scan."""

# ruff: noqa: S608 - every statement is built from this module's constant names, never input.
from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError, connections, transaction

from finance.ledger.db.triggers import Deferred

logger = logging.getLogger("finance")

TABLE = "finance_transaction"
FTS = "finance_txn_search"
MAP = "finance_txn_search_map"
STATE = "finance_txn_search_state"
TRIGGERS = ("finance_txn_search_ai", "finance_txn_search_au", "finance_txn_search_ad")

# A transaction's FTS rowid, joined in where it is already indexed (not merely queued).
_INDEXED = f"FROM {MAP} m, {STATE} s WHERE m.txn_id = {{row}}.id AND m.id <= s.indexed_upto"
# Contentless (content=''): the index holds no copy of the texts, which the ledger row already
# has (a 200,000-row insert 2.2 -> 1.4 s, the file a third smaller). Such a table forgets a row
# only by the 'delete' command given the very texts it indexed: the triggers pass the old row's.
CONTENTLESS = "content=''"
# FTS5 keeps the terms of a transaction's inserts in memory up to this many bytes (its default:
# 1 MB) and writes them out as a new segment each time, which it merges later: a million names
# into the trigram index 3.0 s with the default, 1.6 s with 32 MB (peak RSS +44 MB, only while
# a large write holds that much; bench/README.md). A setting kept in the table itself, so every
# connection has it; `search_index_ensure` (after every migrate) gives it to an index made
# before it, where this SQLite knows the option.
HASHSIZE = f"INSERT INTO {FTS} ({FTS}, rank) VALUES ('hashsize', {32 * 1024 * 1024})"
SCHEMA = [
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS} USING fts5(name, notes, "
    f"{CONTENTLESS}, tokenize='trigram')",
    # AUTOINCREMENT: ids only grow, so "id > indexed_upto" is exactly what is not indexed yet.
    f"CREATE TABLE IF NOT EXISTS {MAP} "
    "(id INTEGER PRIMARY KEY AUTOINCREMENT, txn_id char(32) NOT NULL UNIQUE)",
    f"CREATE TABLE IF NOT EXISTS {STATE} "
    "(id INTEGER PRIMARY KEY CHECK (id = 1), indexed_upto INTEGER NOT NULL)",
    f"INSERT OR IGNORE INTO {STATE} (id, indexed_upto) VALUES (1, 0)",
]
# An insert only queues the row (FTS5 flushes its buffer at every statement, so indexing row
# by row from a trigger costs several times a set-based insert); edits and deletes of
# indexed rows are applied at once.
_FORGET = f"""INSERT INTO {FTS} ({FTS}, rowid, name, notes)
            SELECT 'delete', m.id, old.name, coalesce(old.notes, '')
            {_INDEXED.format(row="old")};"""
TRIGGER_SQL = [
    f"""CREATE TRIGGER IF NOT EXISTS {TRIGGERS[0]} AFTER INSERT ON {TABLE} BEGIN
        INSERT INTO {MAP} (txn_id) VALUES (new.id);
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TRIGGERS[1]} AFTER UPDATE OF name, notes ON {TABLE} BEGIN
        {_FORGET}
        INSERT INTO {FTS} (rowid, name, notes)
            SELECT m.id, new.name, coalesce(new.notes, '') {_INDEXED.format(row="new")};
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TRIGGERS[2]} AFTER DELETE ON {TABLE} BEGIN
        {_FORGET}
        DELETE FROM {MAP} WHERE txn_id = old.id;
    END""",
]
# The insert trigger's work for every row above a rowid: a large insert's (deferred.py). Its
# rows are queued in rowid order, so they take consecutive map ids in that order; when nothing
# was queued before them (the index is caught up to just below the first one's map id) they
# are indexed at once in the same order, numbered by row_number(), from a scan of their rowid
# range. The catch-up's join of the map to the ledger by UUID read the ledger's key index in
# random order: a million rows took 10.3 s through it, 5.5 s without (bench/README.md).
# Otherwise the catch-up indexes them later.
_BEFORE_FIRST = (  # the map id just below the new rows': one lookup, not a count of them
    f"(SELECT id - 1 FROM {MAP} WHERE txn_id = "
    f"(SELECT id FROM {TABLE} WHERE rowid > %s ORDER BY rowid LIMIT 1))"
)
_ALONE = f"(SELECT indexed_upto FROM {STATE}) = {_BEFORE_FIRST}"
SQLITE_INSERT = (
    Deferred(
        table=TABLE,
        name=TRIGGERS[0],
        create=TRIGGER_SQL[0],
        derive=(
            f"INSERT INTO {MAP} (txn_id) SELECT id FROM {TABLE} WHERE rowid > %s ORDER BY rowid",
            f"""INSERT INTO {FTS} (rowid, name, notes)
                SELECT s.indexed_upto + row_number() OVER (ORDER BY {TABLE}.rowid), name,
                    coalesce(notes, '')
                FROM {TABLE}, {STATE} s
                WHERE {TABLE}.rowid > %s AND {_ALONE}""",
            f"UPDATE {STATE} SET indexed_upto = (SELECT max(id) FROM {MAP}) WHERE {_ALONE}",
        ),
    ),
)
REBUILD = [
    f"INSERT INTO {FTS} ({FTS}) VALUES ('delete-all')",
    f"DELETE FROM {MAP}",
    f"UPDATE {STATE} SET indexed_upto = 0",
    f"INSERT INTO {MAP} (txn_id) SELECT id FROM {TABLE}",
]
CATCH_UP = f"""INSERT INTO {FTS} (rowid, name, notes)
    SELECT m.id, t.name, coalesce(t.notes, '') FROM {MAP} m JOIN {TABLE} t ON t.id = m.txn_id
    WHERE m.id > %s AND m.id <= %s"""
# Transactions whose name or notes contain the phrase (the `%s` is an FTS5 phrase string).
MATCH_SQL = f"SELECT m.txn_id FROM {FTS} s JOIN {MAP} m ON m.id = s.rowid WHERE {FTS} MATCH %s"


def _existing(cursor: Any, kind: str, names: tuple[str, ...]) -> set[str]:
    marks = ", ".join(["%s"] * len(names))
    cursor.execute(
        f"SELECT name FROM sqlite_master WHERE type = %s AND name IN ({marks})",
        [kind, *names],
    )
    return {row[0] for row in cursor.fetchall()}


def _outdated(cursor: Any) -> bool:
    """True when the index was made by an earlier version: a copy of the texts in the FTS
    table, or triggers deleting from it by rowid (which a contentless table refuses)."""
    cursor.execute("SELECT name, sql FROM sqlite_master WHERE name IN (%s, %s)", [FTS, TRIGGERS[2]])
    made = dict(cursor.fetchall())
    return bool(made) and not (
        CONTENTLESS in made.get(FTS, "") and "'delete'" in made.get(TRIGGERS[2], "")
    )


def search_index_ensure(*, using: str = "default") -> bool:
    """Create the index, its triggers and contents where any is missing; True when in place."""
    connection = connections[using]
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        if not _existing(cursor, "table", (TABLE,)):
            return False  # not migrated yet
        if _outdated(cursor):
            search_index_drop(using=using)  # an index that kept its own copy of the texts
        complete = len(_existing(cursor, "trigger", TRIGGERS)) == len(TRIGGERS) and _existing(
            cursor, "table", (FTS, MAP, STATE)
        ) == {FTS, MAP, STATE}
        if not complete:
            try:
                with transaction.atomic(using=using):
                    for sql in SCHEMA + TRIGGER_SQL + REBUILD:
                        cursor.execute(sql)
            except DatabaseError as exc:  # no FTS5 or no trigram tokenizer: search scans
                logger.warning("SQLite search index not available (%s): search scans", exc)
                return False
        _hashsize(cursor, using)
    search_index_catch_up(connection)
    return True


def _hashsize(cursor: Any, using: str) -> None:
    """Give the index its in-memory buffer (HASHSIZE); an older SQLite without the option
    keeps FTS5's default."""
    try:
        with transaction.atomic(using=using):
            cursor.execute(HASHSIZE)
    except DatabaseError as exc:
        logger.info("SQLite search index keeps its default buffer (%s)", exc)


def search_index_catch_up(connection: Any) -> int:
    """Index the transactions queued since the last call, in one statement; how many."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT indexed_upto, (SELECT max(id) FROM {MAP}) FROM {STATE}")
        row = cursor.fetchone()
        if row is None or row[1] is None or row[1] <= row[0]:
            return 0
        done, upto = row
        with transaction.atomic(using=connection.alias):
            # Re-read under the write lock: another process may have caught up meanwhile.
            cursor.execute(f"UPDATE {STATE} SET indexed_upto = indexed_upto")
            cursor.execute(f"SELECT indexed_upto FROM {STATE}")
            done = cursor.fetchone()[0]
            if upto <= done:
                return 0
            cursor.execute(CATCH_UP, [done, upto])
            cursor.execute(f"UPDATE {STATE} SET indexed_upto = %s", [upto])
        return upto - done


def search_index_drop(*, using: str = "default") -> None:
    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        for name in TRIGGERS:
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
        for table in (FTS, MAP, STATE):
            cursor.execute(f"DROP TABLE IF EXISTS {table}")


def search_index_ready(connection: Any) -> bool:
    with connection.cursor() as cursor:
        return bool(_existing(cursor, "trigger", (TRIGGERS[0],)))


def phrase(term: str) -> str:
    """An FTS5 phrase matching `term` as a substring (trigram tokens), quotes escaped."""
    return '"' + term.replace('"', '""') + '"'


def search_index_refresh(connection: Any) -> bool:
    """Index what ledger writes queued; True when SQLite's index is there to answer searches
    (after a ledger write, and before a search, so a search never misses a row)."""
    if connection.vendor != "sqlite" or not search_index_ready(connection):
        return False
    search_index_catch_up(connection)
    return True
