"""Planner settings for one large set-based statement (PostgreSQL)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def hash_joins(cursor: Any, *, work_mem: str | None = None) -> Iterator[None]:
    """Inside the block, this transaction's statements join by hash or merge, never by a
    nested loop, and without the JIT. A table grown since its last ANALYZE (a first sync's
    earlier accounts, an import published moments ago) is counted as a handful of rows, and
    the planner loops over it: an index probe per row, minutes at a million. A plan priced
    with loops disabled then passes the JIT's threshold, whose compiling alone took a second
    a statement (our connections run without the JIT anyway unless POSTGRES_JIT is set:
    config/settings/base.py). Both settings are put back after the block; a failure inside it leaves
    them to the rollback that follows (set_config(..., true) lasts to the end of the
    transaction or savepoint, and a rollback undoes it). `work_mem`: the memory a hash may
    take before it spills to disk in batches, for the block (a hash of 100,000 ledger keys
    is ~10 MB, past the default 4 MB: 180 ms in two batches, 110 ms in one). Other
    databases: nothing changes."""
    if cursor.db.vendor != "postgresql":
        yield
        return
    names = ["enable_nestloop", "jit"] + (["work_mem"] if work_mem else [])
    values = ["off", "off"] + ([work_mem] if work_mem else [])
    reads = ", ".join(f"current_setting('{name}')" for name in names)
    sets = ", ".join(f"set_config('{name}', %s, true)" for name in names)
    cursor.execute(f"SELECT {reads}, {sets}", values)
    before = list(cursor.fetchone()[: len(names)])
    yield
    cursor.execute(f"SELECT {sets}", before)
