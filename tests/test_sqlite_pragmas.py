"""SQLite connections are opened for a household's writes (config/settings/base.py): WAL with
normal syncs, a 32 MB page cache, and checkpoints every 10,000 WAL pages with the file cut back
to 64 MB after them."""

from __future__ import annotations

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's own settings")
def test_sqlite_connection_settings():
    with connection.cursor() as cursor:
        found = {}
        for pragma in (
            "journal_mode",
            "synchronous",
            "cache_size",
            "wal_autocheckpoint",
            "journal_size_limit",
        ):
            cursor.execute(f"PRAGMA {pragma}")
            found[pragma] = cursor.fetchone()[0]
    # The test database may live in memory, whose journal is its own.
    assert found["journal_mode"] in ("wal", "memory")
    assert found == {
        "journal_mode": found["journal_mode"],
        "synchronous": 1,  # NORMAL
        "cache_size": -32768,
        "wal_autocheckpoint": 10000,
        "journal_size_limit": 67108864,
    }
