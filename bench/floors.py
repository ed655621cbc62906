"""Bare floors for the write workloads (issue 19): what the database and Python's csv module
do alone, measured in the same run as the workload they stand beside.

- `csv_read`: the CSV read by the csv module into tuples, nothing else.
- `bare_load`: the same rows COPYed (PostgreSQL) or `executemany`d in one transaction (SQLite)
  into a plain table with the ledger table's columns, a primary key and no other index,
  constraint or trigger (`plain_table`). None of our machinery (triggers, counters, the
  search queue, tag dates) runs in it.
- `bare_antijoin`: a re-import's floor: the file's keys staged (COPY / executemany) and one
  anti-join against the plain table's rows (no index but the primary key, as the floor has).

A floor's rows carry every column the ledger table has (our own defaults for the ones the
workload does not give), so the bytes written are the same."""

from __future__ import annotations

import csv
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import constant_defaults

FLOOR_TABLE = "bench_floor_txn"
STAGE_TABLE = "bench_floor_keys"
SQLITE_BATCH = 10_000


def _pg() -> bool:
    from django.db import connection

    return connection.vendor == "postgresql"


def plain_table(name: str = FLOOR_TABLE) -> list[str]:
    """(Re)create `name` with finance_transaction's columns and types, a primary key on `id`
    and nothing else; returns its column names in table order."""
    from django.db import connection

    from finance.models import Transaction

    source = Transaction._meta.db_table
    with connection.cursor() as cur:
        cur.execute(f'DROP TABLE IF EXISTS "{name}"')
        if _pg():
            # LIKE copies columns, types, NOT NULL and defaults; no index, constraint or trigger.
            cur.execute(f'CREATE TABLE "{name}" (LIKE "{source}" INCLUDING DEFAULTS)')
            cur.execute(f'ALTER TABLE "{name}" ADD PRIMARY KEY (id)')
        else:
            cur.execute(f'PRAGMA table_info("{source}")')
            cols = [
                f'"{col}" {kind}{" NOT NULL" if notnull else ""}'
                for _cid, col, kind, notnull, _default, _pk in cur.fetchall()
            ]
            cur.execute(f'CREATE TABLE "{name}" ({", ".join(cols)}, PRIMARY KEY (id))')
        cur.execute(f'SELECT * FROM "{name}" WHERE 1 = 0')
        return [d[0] for d in cur.description]


def drop(name: str = FLOOR_TABLE) -> None:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(f'DROP TABLE IF EXISTS "{name}"')


def csv_read(path: Path) -> tuple[float, int]:
    """Seconds to read the CSV into tuples with the csv module (header skipped), and rows."""
    start = time.perf_counter()
    n = 0
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        next(reader)
        for _row in map(tuple, reader):
            n += 1
    return time.perf_counter() - start, n


def csv_rows(path: Path) -> Iterator[tuple[str, ...]]:
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        next(reader)
        yield from map(tuple, reader)


def ident(value: Any) -> Any:
    """A key as the driver takes it (SQLite stores Django's UUIDs as 32 hex characters)."""
    if isinstance(value, uuid.UUID):
        return str(value) if _pg() else value.hex
    if hasattr(value, "pk"):
        return ident(value.pk)
    return value


def _writer(cur: Any, table: str, columns: Sequence[str]) -> Callable[[Iterable[tuple]], int]:
    names = ", ".join(f'"{c}"' for c in columns)
    if _pg():

        def write(rows: Iterable[tuple]) -> int:
            n = 0
            with cur.cursor.copy(f'COPY "{table}" ({names}) FROM STDIN') as copy:
                for row in rows:
                    copy.write_row(row)
                    n += 1
            return n

        return write
    sql = f'INSERT INTO "{table}" ({names}) VALUES ({", ".join("?" * len(columns))})'

    def write_sqlite(rows: Iterable[tuple]) -> int:
        n, batch = 0, []
        for row in rows:
            batch.append(row)
            if len(batch) >= SQLITE_BATCH:
                cur.executemany(sql, batch)
                n += len(batch)
                batch.clear()
        if batch:
            cur.executemany(sql, batch)
            n += len(batch)
        return n

    return write_sqlite


def bare_load(
    given: Sequence[str], rows: Iterable[tuple], *, table: str = FLOOR_TABLE, keep: bool = False
) -> tuple[float, int]:
    """Seconds to write `rows` (tuples for the columns `given`; the other columns take the
    ledger's defaults) into a fresh plain table in one transaction, and rows written. The
    rows iterable is consumed inside the timing (a CSV read counts toward the floor)."""
    from django.db import connection, transaction

    from finance.models import Transaction

    columns = plain_table(table)
    defaults = constant_defaults(Transaction, given)
    extra_cols = [c for c in columns if c not in given and c in defaults]
    extra = tuple(defaults[c] for c in extra_cols)
    if not _pg():  # booleans and JSON as SQLite stores them
        extra = tuple(int(v) if isinstance(v, bool) else v for v in extra)
    start = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cur:
        write = _writer(cur, table, [*given, *extra_cols])
        n = write((*row, *extra) for row in rows)
    seconds = time.perf_counter() - start
    if not keep:
        drop(table)
    return seconds, n


def bare_antijoin(keys: Iterable[tuple], *, table: str = FLOOR_TABLE) -> tuple[float, int]:
    """A re-import's floor: stage the file's (key,) tuples into a plain table in one
    transaction and anti-join them against `table`'s `external_id` (one statement); returns
    seconds (the keys iterable is consumed inside the timing) and the rows found new."""
    from django.db import connection, transaction

    start = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(f'DROP TABLE IF EXISTS "{STAGE_TABLE}"')
        cur.execute(f'CREATE TEMPORARY TABLE "{STAGE_TABLE}" (k varchar(255) NOT NULL)')
        _writer(cur, STAGE_TABLE, ["k"])(keys)
        # PostgreSQL: NOT EXISTS, a hash anti-join (NOT IN hashes its subquery only while it
        # fits work_mem: at a million keys it became a scan per key, quadratic). SQLite: NOT
        # IN, which builds a transient index of the subquery (a correlated NOT EXISTS against
        # a column with no index is quadratic there).
        if connection.vendor == "postgresql":
            cur.execute(
                f'SELECT count(*) FROM "{STAGE_TABLE}" s WHERE NOT EXISTS '
                f'(SELECT 1 FROM "{table}" f WHERE f.external_id = s.k)'
            )
        else:
            cur.execute(
                f'SELECT count(*) FROM "{STAGE_TABLE}" s WHERE s.k NOT IN '
                f'(SELECT f.external_id FROM "{table}" f WHERE f.external_id IS NOT NULL)'
            )
        new = cur.fetchone()[0]
        cur.execute(f'DROP TABLE "{STAGE_TABLE}"')
    return time.perf_counter() - start, new


@contextmanager
def kept_table(table: str = FLOOR_TABLE) -> Iterator[None]:
    try:
        yield
    finally:
        drop(table)
