"""List speed: the exact total_count, computed without a COUNT(*) when the page is short."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import TransactionFactory

URL = "/api/v1/transactions"


def counts(ctx: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in ctx.captured_queries if "COUNT(" in q["sql"].upper()]


@pytest.mark.django_db
class TestListCounts:
    def test_short_first_page_counts_from_its_rows(self, alice):
        account = alice.account()
        TransactionFactory.create_batch(7, account=account)
        with CaptureQueriesContext(connection) as ctx:
            r = alice.client.get(URL, {"per_page": 10})
        assert r.json()["pagination"] == {
            "page": 1,
            "per_page": 10,
            "total_count": 7,
            "total_pages": 1,
        }
        assert counts(ctx) == []

    def test_short_last_page_counts_from_its_rows(self, alice):
        TransactionFactory.create_batch(23, account=alice.account())
        with CaptureQueriesContext(connection) as ctx:
            r = alice.client.get(URL, {"per_page": 10, "page": 3})
        assert len(r.json()["transactions"]) == 3
        assert r.json()["pagination"]["total_count"] == 23
        assert r.json()["pagination"]["total_pages"] == 3
        assert counts(ctx) == []

    def test_full_page_and_page_beyond_the_end_count_exactly(self, alice, charlie):
        TransactionFactory.create_batch(20, account=alice.account())
        TransactionFactory.create_batch(5, account=charlie.account())
        with CaptureQueriesContext(connection) as ctx:
            full = alice.client.get(URL, {"per_page": 10, "page": 2}).json()
        assert full["pagination"]["total_count"] == 20
        assert len(full["transactions"]) == 10
        # The count is on the bare filtered table: no joins for the list's related rows.
        [count_sql] = counts(ctx)
        assert "JOIN" not in count_sql.upper()
        beyond = alice.client.get(URL, {"per_page": 10, "page": 9}).json()
        assert beyond["transactions"] == []
        assert beyond["pagination"]["total_count"] == 20
        assert beyond["pagination"]["total_pages"] == 2

    def test_empty_list(self, alice):
        r = alice.client.get(URL)
        assert r.json()["pagination"]["total_count"] == 0
        assert r.json()["pagination"]["total_pages"] == 0
