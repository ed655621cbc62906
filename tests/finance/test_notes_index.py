"""PostgreSQL: the notes trigram index holds only the rows with notes (migration 0018), and a
search still finds notes through it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Q

from finance.models import Transaction
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
    # The search's own condition (finance/selectors/transactions.py), alone: its notes half
    # must be answerable from the partial index, so the planner must prove the predicate.
    condition = Q(name__icontains="machine") | Q(notes__icontains="machine")
    sql, params = Transaction.objects.filter(condition).values("id").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Bitmap Index Scan on txn_notes_trgm" in plan, plan
    assert "Bitmap Index Scan on txn_name_trgm" in plan, plan
