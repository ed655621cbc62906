"""Batched inserts without the ORM's per-value overhead: COPY on PostgreSQL, executemany on
SQLite (bulk_create's per-value preparation is most of a million-row import's cost). Values
are adapted once per field type with the backend's own adapters; every column
the caller does not give gets the field's default (auto_now fields: now), so a new column with
a default needs no change here."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from decimal import Decimal
from itertools import repeat
from operator import itemgetter
from typing import Any

import orjson
from django.db import connection, models, transaction
from django.utils import timezone

from core.exact import ExactDecimalField
from core.planner import hash_joins
from finance.ledger.db import deferred
from finance.ledger.db.copyrows import CopyStream, copy_rows

# Up to this many rows take plain INSERT statements: COPY and a staging table cost more than
# they save for a handful.
SMALL = 32
# The memory an INSERT ... SELECT's sort may take before it spills to disk (PostgreSQL): an
# import's rows in their accounts' date order, about 180 bytes a row (50,000 rows: 9 MB).
INSERT_SELECT_WORK_MEM = "64MB"


def value_adapter(field: models.Field, copy: bool = False) -> Callable[[Any], Any] | None:
    """How to turn a value of `field` into what the driver takes; None: as it is. `copy`:
    for COPY, which takes JSON as its text (Django's Jsonb wrapper cost 15 us a value)."""
    ops = connection.ops
    target = field.target_field if field.is_relation else field
    pg = connection.vendor == "postgresql"
    if isinstance(target, models.JSONField):
        if pg and not copy:
            return lambda v: ops.adapt_json_value(v, target.encoder)
        if target.encoder is None:
            return json_text
        return lambda v: json.dumps(v, cls=target.encoder)
    if pg:
        # psycopg takes UUIDs, dates, datetimes and Decimals (or their text) natively.
        return None
    if isinstance(target, models.UUIDField):
        return lambda v: v.hex if hasattr(v, "hex") else v
    if isinstance(target, models.DateTimeField):
        return ops.adapt_datetimefield_value
    if isinstance(target, models.DateField):
        return ops.adapt_datefield_value
    if isinstance(target, ExactDecimalField):  # the canonical text (core/exact.py)
        text = target.sqlite_text
        return lambda v: text(v if isinstance(v, Decimal) else target.to_python(v))
    if isinstance(target, models.DecimalField):
        return ops.adapt_decimalfield_value
    return None


def json_text(value: Any) -> str:
    """`value` as JSON text: orjson (40x json.dumps for an import row's cells, 3 per row),
    json.dumps for what orjson refuses (integers past 64 bits, keys that are not strings)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value)


def _fixed(
    model: type[models.Model], given: Sequence[models.Field]
) -> list[tuple[models.Field, Any]]:
    """The columns a writer does not give, with the value each takes."""
    meta = model._meta
    now = timezone.now()
    fixed: list[tuple[models.Field, Any]] = []
    for field in meta.concrete_fields:
        if field in given:
            continue
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            fixed.append((field, now))
        elif field.primary_key:
            if isinstance(field, models.AutoField):
                continue
            raise ValueError(f"{model.__name__}.{field.name}: give each row its own key")
        elif field.has_default() or field.null:
            fixed.append((field, field.get_default()))
        else:
            raise ValueError(f"{model.__name__}.{field.name} needs a value")
    return fixed


def _prepare(
    model: type[models.Model],
    names: Sequence[str],
    rows: Sequence[Sequence[Any]],
    copy: bool = False,
) -> tuple[list[models.Field], list[tuple]]:
    """The table's fields (given ones, then defaults) and each row's adapted values."""
    given = [model._meta.get_field(name) for name in names]
    fixed = _fixed(model, given)
    fields = given + [f for f, _ in fixed]
    tail = tuple(_adapt(value_adapter(f, copy), v) for f, v in fixed)
    adapters = [value_adapter(f, copy) for f in given]
    if not any(adapters):  # PostgreSQL without JSON: the rows go as they are
        return fields, [(*row, *tail) for row in rows]
    width = len(adapters)
    if any(n != width for n in set(map(len, rows))):
        bad = next(len(row) for row in rows if len(row) != width)
        raise ValueError(f"{model.__name__}: a row of {bad} values for {width} fields")
    # Column by column: only the columns that need it are adapted (on PostgreSQL, the JSON
    # ones: 3 of an import row's 16), the others pass through zip untouched (row by row, each
    # row's list and tuple cost 1.6 us). Keys and dates, which repeat down a batch (its
    # household, account, import, days), are adapted once per distinct value (SQLite: 50,000
    # import rows 0.20 -> 0.14 s of CPU).
    adapted = [(i, a) for i, a in enumerate(adapters) if a is not None]
    values: list[Iterable[Any]] = [map(itemgetter(i), rows) for i in range(width)]
    for i, adapter in adapted:
        if _repeats(given[i]):
            values[i] = map(_Once(adapter).__getitem__, values[i])
        else:
            values[i] = [None if v is None else adapter(v) for v in values[i]]
    # The defaults repeat without end: the rows' own columns decide where the zip stops.
    return fields, list(zip(*values, *map(repeat, tail), strict=False))


def _repeats(field: models.Field) -> bool:
    """Whether a column's values are keys or days (hashable, and equal ones adapt alike)."""
    target = field.target_field if field.is_relation else field
    return isinstance(target, models.UUIDField) or type(target) is models.DateField


class _Once(dict):
    """Each distinct value adapted once (a lookup per value in C after the first)."""

    __slots__ = ("adapter",)

    def __init__(self, adapter: Callable[[Any], Any]) -> None:
        super().__init__()
        self.adapter = adapter

    def __missing__(self, value: Any) -> Any:
        out = self[value] = None if value is None else self.adapter(value)
        return out


def _adapt(adapter: Callable[[Any], Any] | None, value: Any) -> Any:
    return value if adapter is None or value is None else adapter(value)


def _triggers(
    model: type[models.Model], rows: int | None, *, plain: bool, about: int | None = None
) -> AbstractContextManager[None]:
    """SQLite: a large insert into the ledger or its tag links runs its per-row insert
    triggers' work once for the statement, and one that doubles the ledger rebuilds its
    random-order indexes after it (finance/ledger/db/deferred.py). `rows`: how many it
    inserts (None: a statement's, not known), `about`: an estimate of those; `plain`: no
    `ON CONFLICT`."""
    table = model._meta.db_table
    if not deferred.applies(table, rows):
        return nullcontext()
    return deferred.triggers_deferred(table, rows if rows is not None else about, plain=plain)


def _by_copy(rows: Sequence[Any]) -> bool:
    """Whether these rows go by COPY: on PostgreSQL, more than SMALL of them."""
    return connection.vendor == "postgresql" and len(rows) > SMALL


def fast_insert(
    model: type[models.Model], names: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """INSERT `rows` (tuples in the order of `names`, field names) into `model`'s table."""
    rows = rows if isinstance(rows, Sequence) else list(rows)
    by_copy = _by_copy(rows)
    fields, params = _prepare(model, names, rows, by_copy)
    if not params:
        return 0
    qn = connection.ops.quote_name
    table = qn(model._meta.db_table)
    # Table and column names come from the model's meta, never from input.
    names_sql = ", ".join(qn(f.column) for f in fields)
    with _triggers(model, len(params), plain=True), connection.cursor() as cursor:
        if by_copy:
            # COPY: the database's own bulk path, faster than an executemany pipeline.
            copy_rows(cursor, table, fields, params)
        else:
            placeholders = ", ".join(["%s"] * len(fields))
            sql = f"INSERT INTO {table} ({names_sql}) VALUES ({placeholders})"  # noqa: S608
            cursor.executemany(sql, params)
    return len(params)


class StreamedInsert:
    """`fast_insert` for rows that come batch by batch (a file being read): on PostgreSQL the
    batches go through one COPY that stays open (copyrows.CopyStream), so the server stores a
    batch while the caller reads the next; a refusal is raised by `close`, or by a later
    `write`. Elsewhere each batch is inserted on its own. A context manager: leaving it on an
    error ends the COPY as failed, so that the caller's transaction can roll back. Nothing
    else may use the connection while it is open (a query between batches would fail)."""

    def __init__(self, model: type[models.Model], names: Sequence[str]) -> None:
        self.model, self.names = model, names
        self._cursor: Any = None
        self._stream: CopyStream | None = None

    def __enter__(self) -> StreamedInsert:
        return self

    def write(self, rows: Sequence[Sequence[Any]]) -> int:
        if connection.vendor != "postgresql":
            return fast_insert(self.model, self.names, rows)
        fields, params = _prepare(self.model, self.names, rows, True)
        if params:
            if self._stream is None:
                self._cursor = connection.cursor()
                self._stream = CopyStream(
                    self._cursor, connection.ops.quote_name(self.model._meta.db_table)
                )
            self._stream.write(fields, params)
        return len(params)

    def close(self) -> None:
        self.__exit__(None, None, None)

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        stream, cursor, self._stream, self._cursor = self._stream, self._cursor, None, None
        try:
            if stream is not None:
                stream.__exit__(exc_type, exc, tb)  # finished, or aborted on an error
        finally:
            if cursor is not None:
                cursor.close()


def insert_select(
    model: type[models.Model],
    names: Sequence[str],
    select_sql: str,
    params: Sequence[Any],
    *,
    about: int | None = None,
) -> int:
    """INSERT into `model`'s table the rows of one SELECT (its columns in the order of
    `names`, field names), in one statement: rows staged in the database (an import's) never
    pass through Python. Columns not given take their defaults, as in `fast_insert`.

    The SELECT is a subquery, not a CTE: its keys are made by volatile functions, so
    PostgreSQL would not inline a CTE and wrote every row to a tuplestore first (10 MB on disk
    at 50,000 rows). On PostgreSQL the statement joins by hash (a never-analyzed import table
    looks like a handful of rows, and a nested loop filtered every row against every mapping)
    and sorts in memory up to INSERT_SELECT_WORK_MEM (its sort spilled 9 MB at 50,000 rows).
    `about`: about how many rows the SELECT gives, where the caller knows (None: not known)."""
    given = [model._meta.get_field(name) for name in names]
    fixed = _fixed(model, given)
    qn = connection.ops.quote_name
    columns = [f.column for f in given] + [f.column for f, _ in fixed]
    tail = [_adapt(value_adapter(f), v) for f, v in fixed]
    defaults = "".join(", %s" for _ in tail)
    sql = (
        f"INSERT INTO {qn(model._meta.db_table)} ({', '.join(qn(c) for c in columns)}) "  # noqa: S608
        f"SELECT staged.*{defaults} FROM ({select_sql}) AS staged"
    )
    with (
        _triggers(model, None, plain=True, about=about),
        connection.cursor() as cursor,
        hash_joins(cursor, work_mem=INSERT_SELECT_WORK_MEM),
    ):
        cursor.execute(sql, [*tail, *params])  # the defaults come first in the text
        return cursor.rowcount


def _copy_new(cursor: Any, table: str, fields: list, params: list[tuple]) -> bool:
    """COPY rows whose keys were checked free straight into the table, in a savepoint: False
    when a racing writer stored one of them meanwhile (nothing is written then). Staging the
    rows for an `ON CONFLICT` costs a second pass the common case does not need."""
    try:
        with transaction.atomic():
            copy_rows(cursor, table, fields, params)
    except connection.Database.IntegrityError:
        return False
    return True


def fast_insert_new(
    model: type[models.Model], names: Sequence[str], rows: Sequence[Sequence[Any]]
) -> set[Any]:
    """INSERT rows, skipping any that a unique constraint refuses (ON CONFLICT DO NOTHING);
    return the primary keys of the rows inserted. `names` must start with the primary key, and
    each row's key must be new (a fresh uuid), so "its key is stored" means "it was inserted".

    PostgreSQL: COPY straight into the table; when a key is taken meanwhile (a racing writer),
    COPY into a temporary table, then one INSERT ... SELECT ... RETURNING. SQLite:
    executemany; the count of inserted rows tells whether any was skipped, and only then are
    the keys read back."""
    meta = model._meta
    if names[0] != meta.pk.name:
        raise ValueError("the primary key must come first")
    by_copy = _by_copy(rows)
    fields, params = _prepare(model, names, rows, by_copy)
    if not params:
        return set()
    qn = connection.ops.quote_name
    table = qn(meta.db_table)
    names_sql = ", ".join(qn(f.column) for f in fields)
    keys = {values[0]: row[0] for values, row in zip(params, rows, strict=True)}
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and not by_copy:
            # A few rows (a single create): one plain statement, no staging table.
            row_sql = "(" + ", ".join(["%s"] * len(fields)) + ")"
            cursor.execute(
                f"INSERT INTO {table} ({names_sql}) VALUES "  # noqa: S608
                + ", ".join([row_sql] * len(params))
                + f" ON CONFLICT DO NOTHING RETURNING {qn(meta.pk.column)}",
                [value for values in params for value in values],
            )
            return {keys[row[0]] for row in cursor.fetchall()}
        if by_copy and _copy_new(cursor, table, fields, params):
            return {row[0] for row in rows}
        if by_copy:
            staging = qn(f"_new_{meta.db_table}")
            cursor.execute(
                f"CREATE TEMPORARY TABLE IF NOT EXISTS {staging} "
                f"(LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
            )
            cursor.execute(f"DELETE FROM {staging}")  # noqa: S608 (rows of an earlier call)
            copy_rows(cursor, staging, fields, params)
            cursor.execute(
                f"INSERT INTO {table} ({names_sql}) SELECT {names_sql} FROM {staging} "  # noqa: S608
                f"ON CONFLICT DO NOTHING RETURNING {qn(meta.pk.column)}"
            )
            return {row[0] for row in cursor.fetchall()}
        placeholders = ", ".join(["%s"] * len(fields))
        with _triggers(model, len(params), plain=False):
            cursor.executemany(
                f"INSERT INTO {table} ({names_sql}) VALUES ({placeholders}) "  # noqa: S608
                "ON CONFLICT DO NOTHING",
                params,
            )
        if cursor.rowcount == len(params):
            return {r[0] for r in rows}
        stored: set[Any] = set()
        pks = list(keys)
        for i in range(0, len(pks), 500):
            chunk = pks[i : i + 500]
            cursor.execute(
                f"SELECT {qn(meta.pk.column)} FROM {table} "  # noqa: S608
                f"WHERE {qn(meta.pk.column)} IN ({', '.join(['%s'] * len(chunk))})",
                chunk,
            )
            stored.update(keys[r[0]] for r in cursor.fetchall())
        return stored
