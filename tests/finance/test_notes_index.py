"""PostgreSQL: the notes trigram index holds only the rows with notes (migration 0018), and a
search still finds notes through it."""

from __future__ import annotations

import pytest
from django.db import connection

from finance.models import Transaction
from finance.selectors.transactions import text_match
from tests.factories import TransactionFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's trigram index"),
]


def test_rows_without_notes_have_no_entry_and_a_search_uses_the_index(alice):
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'txn_notes_trgm'")
        [(definition,)] = cursor.fetchall()
    assert definition.endswith("WHERE (notes IS NOT NULL)"), definition

    account = alice.account()
    TransactionFactory(account=account, name="Rent", notes="coffee machine share")
    for i in range(5):
        TransactionFactory(account=account, name=f"Shop {i}", notes=None)
    r = alice.client.get("/api/v1/transactions", {"search": "machine"})
    assert [t["name"] for t in r.json()["transactions"]] == ["Rent"]
    # The search's own condition, alone (with the household's, a 6-row table is read through
    # the household's index): its notes half must be answerable from the partial index, so
    # the planner must prove the predicate.
    matches = Transaction.objects.filter(text_match("machine")).values("id")
    sql, params = matches.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Bitmap Index Scan on txn_notes_trgm" in plan, plan
    assert "Bitmap Index Scan on txn_name_trgm" in plan, plan
