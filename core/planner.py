"""Planner settings for one large set-based statement (PostgreSQL)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def hash_joins(cursor: Any) -> Iterator[None]:
    """Inside the block, this transaction's statements join by hash or merge, never by a
    nested loop, and without the JIT. A table grown since its last ANALYZE (a first sync's
    earlier accounts, an import published moments ago) is counted as a handful of rows, and
    the planner loops over it: an index probe per row, minutes at a million. A plan priced
    with loops disabled then passes the JIT's threshold, whose compiling alone took a second
    a statement. Both settings are put back after the block; a failure inside it leaves
    them to the rollback that follows (set_config(..., true) lasts to the end of the
    transaction or savepoint, and a rollback undoes it). Other databases: nothing changes."""
    if cursor.db.vendor != "postgresql":
        yield
        return
    cursor.execute(
        "SELECT current_setting('enable_nestloop'), current_setting('jit'), "
        "set_config('enable_nestloop', 'off', true), set_config('jit', 'off', true)"
    )
    nestloop, jit, _, _ = cursor.fetchone()
    yield
    cursor.execute(
        "SELECT set_config('enable_nestloop', %s, true), set_config('jit', %s, true)",
        [nestloop, jit],
    )
