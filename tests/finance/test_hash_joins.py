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


def test_insert_select_runs_its_statement_by_hash_and_in_memory():
    """The one-statement insert (an import's publish) runs with nested loops off and its sort
    given INSERT_SELECT_WORK_MEM (PostgreSQL), and leaves the transaction's settings as they
    were. The SELECT's parameters and the columns' defaults each land in their own column."""
    import uuid

    from finance.ledger.db.fastinsert import INSERT_SELECT_WORK_MEM, insert_select
    from finance.models import Transaction
    from tests.factories import AccountFactory

    account = AccountFactory(currency="EUR")
    key = uuid.uuid4()
    pg = connection.vendor == "postgresql"
    if pg:
        select = (
            "SELECT %s::uuid, %s::uuid, %s::uuid, %s::date, %s::numeric, %s,"
            " current_setting('enable_nestloop') || ' ' || current_setting('work_mem')"
        )
        ids = [key, account.family_id, account.pk]
    else:
        select = "SELECT %s, %s, %s, %s, %s, %s, 'off ' || %s"
        ids = [key.hex, account.family_id.hex, account.pk.hex]
    params = [*ids, "2026-01-02", "1.5000", "EUR"] + ([] if pg else [INSERT_SELECT_WORK_MEM])
    names = ("id", "family", "account", "date", "amount", "currency", "name")
    with connection.cursor() as cursor:
        if pg:
            cursor.execute("SELECT set_config('work_mem', '5MB', true)")
        before = settings(cursor) if pg else None
        assert insert_select(Transaction, names, select, params) == 1
        assert (settings(cursor) if pg else None) == before
    row = Transaction.objects.get(pk=key)
    assert row.name == f"off {INSERT_SELECT_WORK_MEM}"
    assert (row.account_id, str(row.amount), row.currency) == (account.pk, "1.5000", "EUR")
    assert (row.kind, row.pending, row.notes, row.import_id) == ("standard", False, None, None)
