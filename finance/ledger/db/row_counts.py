"""How many transactions each account holds, by sign, kept by database triggers.

`total_count` stays exact (docs/decisions.md), and for the list's broad filters an exact
`COUNT(*)` reads every match, many times the cost of the page itself at a million rows
(bench/README.md). A list whose only
filters are accounts and `type` (income: amount < 0, expense: amount >= 0) sums these counters
instead (`TransactionRows`), a handful of rows whatever the ledger's size.

Transactions are written by the ORM, `bulk_create`, `.update()`, `bulk_update`, COPY and
executemany (imports, syncs, bulk create, the bench seeder), so the database keeps the
counters:

- PostgreSQL: statement-level triggers with transition tables append one delta row per
  (household, account, sign) a statement touched. Appending never locks a counter row, so
  concurrent writers to one account neither wait for each other nor deadlock, and a delta
  commits or rolls back with its rows. `TransactionRows` folds a household's deltas into one
  row per key (`_compact`) when they pile up.
- SQLite (one writer at a time): row-level triggers keep one row per key. A delete only
  decrements an existing row, so emptying the tables in any order (a test flush) leaves none.

Django rebuilds a SQLite table when a migration alters it, which drops its triggers, so
`row_counts_ensure` runs after every `migrate` (finance/apps.py), as the search index's does:
it recreates missing triggers and recounts every account from the ledger."""

# ruff: noqa: S608 - every statement is built from this module's constant names, never input.
from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable

from django.db import DatabaseError, connection, connections, transaction

from finance.ledger.db.triggers import Deferred, present_sql, triggers_missing
from finance.models import Transaction
from finance.models.ledger import Counted

logger = logging.getLogger("finance")

TABLE = "finance_transaction"
COUNTS = "finance_transactioncount"
TRIGGERS = ("finance_txn_count_ins", "finance_txn_count_upd", "finance_txn_count_del")
COMPACT_ABOVE = 64  # delta rows read per count before a household's are folded (PostgreSQL)

_KEY = "family_id, account_id, amount >= 0"
_PG_BODIES = {
    TRIGGERS[0]: f"""INSERT INTO {COUNTS} (family_id, account_id, expense, row_count)
        SELECT {_KEY}, count(*) FROM new_rows GROUP BY 1, 2, 3""",
    TRIGGERS[1]: f"""INSERT INTO {COUNTS} (family_id, account_id, expense, row_count)
        SELECT family_id, account_id, expense, sum(n) FROM (
            SELECT {_KEY} AS expense, -1 AS n FROM old_rows
            UNION ALL SELECT {_KEY}, 1 FROM new_rows
        ) moved (family_id, account_id, expense, n)
        GROUP BY 1, 2, 3 HAVING sum(n) <> 0""",
    TRIGGERS[2]: f"""INSERT INTO {COUNTS} (family_id, account_id, expense, row_count)
        SELECT {_KEY}, -count(*) FROM old_rows GROUP BY 1, 2, 3""",
}
_PG_EVENTS = {
    TRIGGERS[0]: f"INSERT ON {TABLE} REFERENCING NEW TABLE AS new_rows",
    # PostgreSQL allows no column list with transition tables: every UPDATE statement passes
    # its rows through, and only a changed account or sign leaves a delta.
    TRIGGERS[1]: f"UPDATE ON {TABLE} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
    TRIGGERS[2]: f"DELETE ON {TABLE} REFERENCING OLD TABLE AS old_rows",
}
_POSTGRES = [
    statement
    for name, body in _PG_BODIES.items()
    for statement in (
        f"""CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN {body}; RETURN NULL; END $$""",
        f"DROP TRIGGER IF EXISTS {name} ON {TABLE}",
        f"""CREATE TRIGGER {name} AFTER {_PG_EVENTS[name]}
            FOR EACH STATEMENT EXECUTE FUNCTION {name}()""",
    )
]


def _sqlite_expense(row: str) -> str:
    # A trigger's new.amount has no column affinity: compared with 0 as it is, any text is
    # greater than any number (amounts are canonical text on SQLite: core/exact.py).
    return f"(CAST({row}.amount AS REAL) >= 0)"


def _sqlite_add(row: str, step: int) -> str:
    key = f"family_id = {row}.family_id AND account_id = {row}.account_id"
    key += f" AND expense = {_sqlite_expense(row)}"
    update = f"UPDATE {COUNTS} SET row_count = row_count + ({step}) WHERE {key};"
    if step < 0:  # never creates a row (see the module's docstring)
        return update
    return f"""{update}
        INSERT INTO {COUNTS} (family_id, account_id, expense, row_count)
            SELECT {row}.family_id, {row}.account_id, {_sqlite_expense(row)}, {step}
            WHERE NOT EXISTS (SELECT 1 FROM {COUNTS} WHERE {key});"""


_SQLITE = [
    f"""CREATE TRIGGER IF NOT EXISTS {TRIGGERS[0]} AFTER INSERT ON {TABLE} BEGIN
        {_sqlite_add("new", 1)}
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TRIGGERS[1]} AFTER UPDATE OF family_id, account_id, amount
        ON {TABLE} WHEN old.family_id IS NOT new.family_id OR old.account_id IS NOT new.account_id
            OR {_sqlite_expense("old")} IS NOT {_sqlite_expense("new")} BEGIN
        {_sqlite_add("old", -1)}
        {_sqlite_add("new", 1)}
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TRIGGERS[2]} AFTER DELETE ON {TABLE} BEGIN
        {_sqlite_add("old", -1)}
    END""",
]
# The insert trigger's work for every row above a rowid: a large insert's
# (finance/ledger/db/deferred.py). The new rows are counted by one scan into a temporary
# table of a few rows (one per key); existing counters are moved by it, missing ones created
# from it (two scans of 50,000 new rows: 0.13 s; one: 0.07 s). NOT INDEXED keeps the scan on
# the rowid range: with a large ledger's statistics SQLite walked the household-amount index
# (which orders the GROUP BY's first key) and fetched every row from the table by it, 1M new
# rows 7 s against 0.5 s.
_NEW = f"""SELECT family_id, account_id, {_sqlite_expense(TABLE)} AS expense, count(*) AS n
    FROM {TABLE} NOT INDEXED WHERE rowid > %s GROUP BY 1, 2, 3"""
_STAGED = "temp.finance_txn_count_new"
SQLITE_INSERT = (
    Deferred(
        table=TABLE,
        name=TRIGGERS[0],
        create=_SQLITE[0],
        derive=(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {_STAGED} (family_id, account_id, expense, n)",
            f"DELETE FROM {_STAGED}",
            f"INSERT INTO {_STAGED} (family_id, account_id, expense, n) {_NEW}",
            f"""UPDATE {COUNTS} AS c SET row_count = c.row_count + new.n FROM {_STAGED} AS new
                WHERE c.family_id = new.family_id AND c.account_id = new.account_id
                    AND c.expense = new.expense""",
            f"""INSERT INTO {COUNTS} (family_id, account_id, expense, row_count)
                SELECT family_id, account_id, expense, n FROM {_STAGED} AS new
                WHERE NOT EXISTS (SELECT 1 FROM {COUNTS} c WHERE c.family_id = new.family_id
                    AND c.account_id = new.account_id AND c.expense = new.expense)""",
            f"DELETE FROM {_STAGED}",
        ),
    ),
)
_RECOUNT = [
    f"DELETE FROM {COUNTS}",
    f"""INSERT INTO {COUNTS} (family_id, account_id, expense, row_count)
        SELECT {_KEY}, count(*) FROM {TABLE} GROUP BY 1, 2, 3""",
]


def row_counts_ensure(*, using: str = "default") -> bool:
    """Create missing triggers and recount the ledger; False when all were in place."""
    conn = connections[using]
    if conn.vendor not in ("sqlite", "postgresql"):
        return False
    with conn.cursor() as cursor:
        if not triggers_missing(cursor, conn.vendor, TRIGGERS):
            return False
        with transaction.atomic(using=using):
            if conn.vendor == "postgresql":  # no writer may slip between recount and trigger
                cursor.execute(f"LOCK TABLE {TABLE} IN SHARE ROW EXCLUSIVE MODE")
            for sql in (_SQLITE if conn.vendor == "sqlite" else _POSTGRES) + _RECOUNT:
                cursor.execute(sql)
    return True


def row_counts_drop(*, using: str = "default") -> None:
    conn = connections[using]
    with conn.cursor() as cursor:
        for name in TRIGGERS:
            if conn.vendor == "sqlite":
                cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
            elif conn.vendor == "postgresql":
                cursor.execute(f"DROP TRIGGER IF EXISTS {name} ON {TABLE}")
                cursor.execute(f"DROP FUNCTION IF EXISTS {name}()")


class TransactionRows:
    """An exact row count of a household's ledger from its counters, for `counted_by`.

    The same query checks that the triggers are in place (not after a SQLite table rebuild
    that `migrate` has not repaired yet); if one is missing, `fallback` counts its matches."""

    def __init__(
        self,
        *,
        family_id: uuid.UUID,
        accounts: Iterable[uuid.UUID] | None,
        expense: bool | None,
        fallback: Counted,
    ) -> None:
        self.family_id = family_id
        self.accounts = None if accounts is None else list(accounts)
        self.expense = expense
        self.fallback = fallback

    def count(self) -> int:
        if connection.vendor not in ("sqlite", "postgresql"):
            return self.fallback.count()
        if self.accounts is not None and not self.accounts:
            return 0

        def key(value: uuid.UUID) -> object:  # the database's form of a UUID, either backend
            return Transaction._meta.pk.get_db_prep_value(value, connection)

        where, params = ["family_id = %s"], [key(self.family_id)]
        if self.accounts is not None:
            where.append(f"account_id IN ({', '.join(['%s'] * len(self.accounts))})")
            params += [key(a) for a in self.accounts]
        if self.expense is not None:
            where.append("expense = %s")
            params.append(self.expense)
        present, names = present_sql(connection.vendor, TRIGGERS)
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT coalesce(sum(row_count), 0), count(*),
                        (SELECT count(*) FROM ({present}) AS present)
                    FROM {COUNTS} WHERE {" AND ".join(where)}""",
                [*names, *params],
            )
            total, deltas, triggers = cursor.fetchone()
        if triggers != len(TRIGGERS):
            return self.fallback.count()
        if connection.vendor == "postgresql" and deltas > COMPACT_ABOVE:
            _compact(self.family_id)
        return int(total)


def _compact(family_id: uuid.UUID) -> None:
    """Fold a household's delta rows into one per key (PostgreSQL). The DELETE returns only
    the rows it removed, so a concurrent fold or writer is never counted twice or lost; new
    deltas written meanwhile stay as they are. A failure only leaves the deltas unfolded."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"""WITH folded AS (DELETE FROM {COUNTS} WHERE family_id = %s
                        RETURNING family_id, account_id, expense, row_count)
                    INSERT INTO {COUNTS} (family_id, account_id, expense, row_count)
                    SELECT family_id, account_id, expense, sum(row_count) FROM folded
                    GROUP BY 1, 2, 3 HAVING sum(row_count) <> 0""",
                [family_id],
            )
    except DatabaseError:  # e.g. a deadlock with another fold: the count stands
        logger.warning("transaction counters of a household could not be folded", exc_info=True)


def row_counts_tidy() -> int:
    """Leave one row per key with rows, for every household; returns the rows removed.

    A count folds its household's deltas only when it reads them (PostgreSQL), so a household
    that writes and never lists piles up one row per writing statement, and a deleted
    account's key stays behind at zero (both databases). The beat runs this every 15 minutes
    (config/schedule.py); it takes no lock a writer waits on."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {COUNTS}")
        before = cursor.fetchone()[0]
        if connection.vendor == "postgresql":
            cursor.execute(
                f"""SELECT DISTINCT family_id FROM {COUNTS} GROUP BY family_id, account_id,
                    expense HAVING count(*) > 1 OR sum(row_count) = 0"""
            )
            for (family_id,) in cursor.fetchall():
                _compact(family_id)
        else:  # one row per key, written one statement at a time: a zero key has no rows
            cursor.execute(f"DELETE FROM {COUNTS} WHERE row_count = 0")
        cursor.execute(f"SELECT count(*) FROM {COUNTS}")
        return before - cursor.fetchone()[0]
