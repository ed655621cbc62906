"""The runner lock of a connection's sync: held by the process running it, from before the
claim to after the outcome is written, and released by the operating system or the database
when that process dies (SIGKILL included).

So a Sync left `syncing` whose lock is free has no runner any more: a redelivery of its task
(the broker hands an unacknowledged task out again after a lost worker) takes it over, and the
settler may fail it; while the lock is held, neither touches it.

- PostgreSQL: a session advisory lock (`pg_try_advisory_lock`), visible to every process and
  host using the database, released when the session ends.
- Other databases (SQLite, one host): an exclusive `flock` on DATA_DIR/locks/sync-<id>.lock,
  released when the file is closed or the process dies."""

from __future__ import annotations

import fcntl
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError
from django.db import connection as db

# An advisory lock key is one bigint: the first 8 bytes of the connection's (random) UUID,
# xored with a tag of this use, so another use deriving keys from the same UUIDs stays apart.
_NAMESPACE = 0x5359  # "SY"


def _advisory_key(connection_id: uuid.UUID) -> int:
    return int.from_bytes(connection_id.bytes[:8], "big", signed=True) ^ _NAMESPACE


def _lock_path(connection_id: uuid.UUID) -> Path:
    folder = Path(settings.DATA_DIR) / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"sync-{connection_id}.lock"


def _advisory_unlock(key: int) -> None:
    if db.connection is None or db.connection.closed:
        return  # the session, and its locks, are gone already
    try:
        with db.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
    except DatabaseError:
        # e.g. inside a failed transaction: ending the session is what releases the lock
        db.close()


@contextmanager
def sync_runner_lock(connection_id: uuid.UUID) -> Iterator[bool]:
    """Yields True when this process now holds the connection's runner lock (released on
    exit), False when another live process holds it. Never waits."""
    if db.vendor == "postgresql":
        key = _advisory_key(connection_id)
        with db.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
            held = bool(cursor.fetchone()[0])
        try:
            yield held
        finally:
            if held:
                _advisory_unlock(key)
        return
    fd = os.open(_lock_path(connection_id), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except BlockingIOError:
            held = False
        yield held
    finally:
        os.close(fd)  # releases the flock


def sync_runner_alive(connection_id: uuid.UUID) -> bool:
    """Whether a live process holds the connection's runner lock (a brief probe)."""
    with sync_runner_lock(connection_id) as held:
        return not held
