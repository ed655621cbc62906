"""A bulk's new rows find their transfer counterparts among the household's stored rows by
amount (finance/ledger/db/pair_candidates.py `legs_by_amount`: one index probe per amount),
with the same rules as before: opposite amount, same currency, another account, at most 4
days apart, not already in a transfer."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from finance.models import Transaction, Transfer
from tests.factories import TransactionFactory

pytestmark = pytest.mark.django_db


def test_a_bulk_pairs_with_stored_counterparts_by_amount_only_where_the_rules_allow(alice):
    checking, savings, other = (alice.account(name=n) for n in ("Checking", "Savings", "Other"))
    day = dt.date(2024, 6, 10)

    def stored(account, amount, days=0, currency="USD"):
        return TransactionFactory(
            account=account, amount=amount, date=day + dt.timedelta(days=days), currency=currency
        )

    match = stored(savings, "-25.00", days=2)
    decoys = [
        stored(savings, "-25.00", days=9),  # too far apart
        stored(savings, "-25.00", currency="EUR"),  # another currency
        stored(checking, "-25.00"),  # the same account as the new leg
        stored(savings, "-26.00"),  # another amount
    ]
    paired_in = stored(other, "-40.00")
    paired_out = stored(savings, "40.00")
    Transfer.objects.create(
        family=alice.family, inflow_transaction=paired_in, outflow_transaction=paired_out
    )
    items = [
        {"account_id": str(checking.pk), "date": day.isoformat(), "amount": "25.00", "name": "a"},
        {"account_id": str(checking.pk), "date": day.isoformat(), "amount": "40.00", "name": "b"},
        *(
            {"account_id": str(checking.pk), "date": day.isoformat(), "amount": f"{i}.01",
             "name": f"n{i}"}
            for i in range(100, 130)
        ),
    ]  # fmt: skip
    with CaptureQueriesContext(connection) as queries:
        r = alice.client.post("/api/v1/transactions/bulk", {"transactions": items}, format="json")
    assert r.status_code == 200, r.content
    first = r.json()["results"][0]["transaction"]
    transfer = Transfer.objects.get(outflow_transaction_id=first["id"])
    assert transfer.inflow_transaction_id == match.pk
    assert first["transfer"]["id"] == str(transfer.pk)
    assert not Transfer.objects.filter(inflow_transaction__in=decoys).exists()
    second = Transaction.objects.get(pk=r.json()["results"][1]["transaction"]["id"])
    assert not Transfer.objects.filter(outflow_transaction=second).exists()
    # One probe of the (household, amount) index per amount, whatever the planner thinks.
    marker = "CROSS JOIN LATERAL" if connection.vendor == "postgresql" else "INDEXED BY"
    probes = [q["sql"] for q in queries.captured_queries if marker in q["sql"]]
    assert len(probes) == 1
    assert ("unnest(" if connection.vendor == "postgresql" else "txn_family_amount") in probes[0]
