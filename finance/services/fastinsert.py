"""Batched inserts without the ORM's per-value overhead: COPY on PostgreSQL, executemany on
SQLite (bulk_create spends ~10 µs per value preparing it; at a million rows that is most of an
import). Values are adapted once per field type with the backend's own adapters; every column
the caller does not give gets the field's default (auto_now fields: now), so a new column with
a default needs no change here."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.db import connection, models
from django.utils import timezone


def _adapter(field: models.Field) -> Callable[[Any], Any]:
    ops = connection.ops
    target = field.target_field if field.is_relation else field
    if isinstance(target, models.UUIDField):
        if connection.features.has_native_uuid_field:
            return lambda v: v
        return lambda v: v.hex if hasattr(v, "hex") else v
    if isinstance(target, models.DateTimeField):
        return ops.adapt_datetimefield_value
    if isinstance(target, models.DateField):
        return ops.adapt_datefield_value
    if isinstance(target, models.DecimalField):
        return ops.adapt_decimalfield_value
    if isinstance(target, models.JSONField):
        if connection.vendor == "sqlite":
            return lambda v: json.dumps(v, cls=target.encoder)
        return lambda v: ops.adapt_json_value(v, target.encoder)
    return lambda v: v


def fast_insert(
    model: type[models.Model], names: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """INSERT `rows` (tuples in the order of `names`, field names) into `model`'s table."""
    meta = model._meta
    given = [meta.get_field(name) for name in names]
    now = timezone.now()
    fixed: list[tuple[models.Field, Any]] = []
    for field in meta.concrete_fields:
        if field in given:
            continue
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            fixed.append((field, now))
        elif field.primary_key and isinstance(field, models.AutoField):
            continue
        elif field.has_default() or field.null:
            fixed.append((field, field.get_default()))
        else:
            raise ValueError(f"{model.__name__}.{field.name} needs a value")
    columns = [f.column for f in given] + [f.column for f, _ in fixed]
    adapters = [_adapter(f) for f in given]
    tail = tuple(None if v is None else _adapter(f)(v) for f, v in fixed)
    qn = connection.ops.quote_name
    # Table and column names come from the model's meta, never from input.
    names_sql = ", ".join(qn(c) for c in columns)
    params = [
        tuple(None if v is None else a(v) for a, v in zip(adapters, row, strict=True)) + tail
        for row in rows
    ]
    if not params:
        return 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # COPY: the database's own bulk path, ~3x an executemany pipeline here.
            with cursor.cursor.copy(f"COPY {qn(meta.db_table)} ({names_sql}) FROM STDIN") as copy:
                for values in params:
                    copy.write_row(values)
        else:
            placeholders = ", ".join(["%s"] * len(columns))
            sql = f"INSERT INTO {qn(meta.db_table)} ({names_sql}) VALUES ({placeholders})"  # noqa: S608
            cursor.executemany(sql, params)
    return len(params)
