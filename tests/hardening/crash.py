"""Helpers for crash-recovery tests: run Django code in a real child process against the live
PostgreSQL test database, kill it with SIGKILL, and watch its database session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
CHILD_APP_NAME = "crash-test-child"


def database_url() -> str:
    """The URL of the test database this test runs on (not the configured one)."""
    s = connection.settings_dict
    user = quote(s.get("USER") or "", safe="")
    password = quote(s.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{s['NAME']}"


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.test",
        DATABASE_URL=database_url(),
        SECRET_KEY=settings.SECRET_KEY,  # the same key decrypts the stored credentials
        FIELD_ENCRYPTION_KEY=getattr(settings, "FIELD_ENCRYPTION_KEY", "") or "",
        PGAPPNAME=CHILD_APP_NAME,
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def spawn(code: str, **extra_env: str) -> subprocess.Popen:
    """A child Python process that sets Django up, then runs `code`."""
    script = "import django\ndjango.setup()\n" + code
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=child_env(**extra_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(condition: Callable[[], object], what: str, child: subprocess.Popen, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if child.poll() is not None:
            _, err = child.communicate()
            raise AssertionError(f"child exited ({child.returncode}) before {what}: {err[-3000:]}")
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def sigkill(child: subprocess.Popen) -> None:
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL, child.returncode


def child_sessions() -> list[dict]:
    """The child's PostgreSQL sessions (fresh snapshot: call outside a transaction)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, state, wait_event_type, query FROM pg_stat_activity "
            "WHERE application_name = %s AND datname = current_database()",
            [CHILD_APP_NAME],
        )
        columns = [c.name for c in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def tables_written_by(pid: int) -> set[str]:
    """Tables on which a session holds RowExclusiveLock: it wrote them in its open transaction."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "WHERE l.pid = %s AND l.mode = 'RowExclusiveLock' AND l.granted AND c.relkind = 'r'",
            [pid],
        )
        return {row[0] for row in cursor.fetchall()}


def wait_sessions_gone(timeout: float = 30.0) -> None:
    """PostgreSQL rolls back a dead client's open transaction when it notices the hang-up."""
    deadline = time.monotonic() + timeout
    while child_sessions():
        assert time.monotonic() < deadline, f"child sessions linger: {child_sessions()}"
        time.sleep(0.05)


class RowLock:
    """Hold `FOR NO KEY UPDATE` on one row from a separate connection: a writer that updates
    the row blocks there, in the middle of its transaction, until release()."""

    def __init__(self, table: str, pk: object) -> None:
        import psycopg

        self.conn = psycopg.connect(database_url(), autocommit=False)
        self.conn.execute(f'SELECT 1 FROM "{table}" WHERE id = %s FOR NO KEY UPDATE', [pk])

    def release(self) -> None:
        if not self.conn.closed:
            self.conn.commit()
            self.conn.close()


class KeyHold:
    """Insert, uncommitted, a transaction holding one idempotency key from a separate
    connection: a writer inserting the same key waits there, in the middle of its statement
    (PostgreSQL waits for the holder to end before it can tell a duplicate), until release()
    rolls the holder back."""

    def __init__(self, *, family_id: object, account_id: object, source: str, key: str) -> None:
        import uuid

        import psycopg

        self.conn = psycopg.connect(database_url(), autocommit=False)
        self.conn.execute(
            """INSERT INTO finance_transaction (id, family_id, account_id, date, amount,
                currency, name, source, external_id, kind, pending, excluded, created_at,
                updated_at)
            VALUES (%s, %s, %s, '2024-01-01', 1, 'USD', 'held', %s, %s, 'standard', false,
                false, now(), now())""",
            [uuid.uuid4(), family_id, account_id, source, key],
        )

    def release(self) -> None:
        if not self.conn.closed:
            self.conn.rollback()
            self.conn.close()
