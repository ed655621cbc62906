"""Which of our database triggers exist: the one catalog query for SQLite and PostgreSQL, shared
by the modules whose copies and counters triggers keep (finance/tag_dates.py,
finance/row_counts.py)."""

# ruff: noqa: S608 - only placeholders are built into the statements, never input.
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def present_sql(vendor: str, names: Sequence[str]) -> tuple[str, list[str]]:
    """A query for the names, among `names`, of the triggers that exist, and its parameters."""
    marks = ", ".join(["%s"] * len(names))
    if vendor == "sqlite":
        sql = f"SELECT name FROM sqlite_master WHERE type = 'trigger' AND name IN ({marks})"
    else:
        sql = f"SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname IN ({marks})"
    return sql, list(names)


def triggers_missing(cursor: Any, vendor: str, names: Sequence[str]) -> set[str]:
    sql, params = present_sql(vendor, names)
    cursor.execute(sql, params)
    return set(names) - {row[0] for row in cursor.fetchall()}


@dataclass(frozen=True)
class Deferred:
    """An insert trigger of `table`: its name, the statement creating it, and the statements
    doing its work for every row whose rowid is above a bound (every parameter of those that
    take one)."""

    table: str
    name: str
    create: str
    derive: tuple[str, ...]
