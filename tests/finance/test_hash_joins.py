"""core.planner.hash_joins: inside the block the planner joins by hash (no nested loop, no
JIT, and the memory asked for); after it, the transaction's settings are what they were."""

from __future__ import annotations

import pytest
from django.db import connection

from core.planner import hash_joins

pytestmark = pytest.mark.django_db

NAMES = ("enable_nestloop", "jit", "work_mem")


def settings(cursor) -> tuple[str, ...]:
    cursor.execute("SELECT " + ", ".join(f"current_setting('{n}')" for n in NAMES))
    return cursor.fetchone()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="planner settings: PostgreSQL")
@pytest.mark.parametrize("work_mem", [None, "64MB"])
def test_settings_inside_the_block_and_back_after(work_mem):
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('work_mem', '5MB', true)")
        before = settings(cursor)
        with hash_joins(cursor, work_mem=work_mem):
            inside = settings(cursor)
        assert inside == ("off", "off", work_mem or "5MB")
        assert settings(cursor) == before
