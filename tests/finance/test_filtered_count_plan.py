"""A list filtered by category or merchant counts its matches from the filter's index alone
(bench/README.md, lists at 1M rows): the index ends with the household, which the count is
scoped to as well, so no table row is read to check it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import CategoryFactory, MerchantFactory, TransactionFactory

pytestmark = pytest.mark.django_db


def plan(sql: str) -> str:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Only an index-only scan left to choose: a plan needing the table costs as a
            # disabled one, which the planner takes only when nothing else answers.
            for kind in ("seqscan", "bitmapscan", "indexscan"):
                cursor.execute(f"SET LOCAL enable_{kind} = off")
            cursor.execute(f"EXPLAIN {sql}")
            return "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
        return "\n".join(str(row[-1]) for row in cursor.fetchall())


@pytest.mark.parametrize("relation", ["category", "merchant"])
def test_the_count_of_a_filtered_list_reads_only_its_index(alice, relation):
    account = alice.account()
    target = (CategoryFactory if relation == "category" else MerchantFactory)(family=alice.family)
    for _ in range(3):
        TransactionFactory(account=account, **{relation: target})
    with CaptureQueriesContext(connection) as seen:
        r = alice.client.get(
            "/api/v1/transactions", {f"{relation}_id": str(target.pk), "per_page": 2}
        )
    assert r.status_code == 200 and r.json()["pagination"]["total_count"] == 3
    [count] = [q["sql"] for q in seen.captured_queries if "COUNT(" in q["sql"]]
    shown = plan(count)
    index = f"txn_{relation}_order"
    if connection.vendor == "postgresql":
        assert f"Index Only Scan using {index}" in shown, shown
    else:
        assert f"COVERING INDEX {index}" in shown, shown
