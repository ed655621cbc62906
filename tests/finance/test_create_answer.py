"""A single create answers from the row it wrote (finance/services/transactions.py,
`transaction_as_written`), not from a re-read: the answer must be exactly what
GET /transactions/{id} gives, whatever the household's rules changed; a row transfer matching
paired, and an existing key's stored row, are read back."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import CategoryFactory, MerchantFactory, TagFactory, TransactionFactory
from tests.finance.test_rules_paths import contains, rule, set_category

pytestmark = pytest.mark.django_db
REREAD = "_prefetch_related_val"  # the re-read's tag prefetch


def _create(household, account, **fields):
    body = {"transaction": {"account_id": str(account.id), "date": "2024-05-02", "amount": "4.50",
                            "name": "Row", **fields}}  # fmt: skip
    with CaptureQueriesContext(connection) as queries:
        r = household.client.post("/api/v1/transactions", body, format="json")
    assert r.status_code in (200, 201), r.content
    sql = [q["sql"] for q in queries.captured_queries]  # before the next request resets them
    assert sql
    read = household.client.get(f"/api/v1/transactions/{r.json()['id']}")
    assert r.json() == read.json()
    return r, sql


def test_each_create_answers_what_a_read_answers(alice):
    checking, savings = alice.account(), alice.account(name="Savings")
    category, merchant = CategoryFactory(family=alice.family), MerchantFactory(family=alice.family)
    tags = [TagFactory(family=alice.family, name=n) for n in ("zeta", "alpha", "mid")]
    ruled = CategoryFactory(family=alice.family, name="Coffee")
    rule(alice, [contains("COFFEE")], [set_category(ruled),
         {"type": "add_tags", "value": [str(tags[1].id)]}])  # fmt: skip

    r, sql = _create(
        alice, checking, amount="12.3456", currency="eur", notes="", excluded=True,
        category_id=str(category.id), merchant_id=str(merchant.id),
        tag_ids=[str(tags[0].id), str(tags[2].id)], external_id="ext-1", source="bank",
    )  # fmt: skip
    assert r.status_code == 201 and not [s for s in sql if REREAD in s]
    assert [t["name"] for t in r.json()["tags"]] == ["mid", "zeta"]

    r, sql = _create(alice, checking, name="BLUE COFFEE", tag_ids=[str(tags[0].id)])
    assert r.status_code == 201 and not [s for s in sql if REREAD in s]
    assert r.json()["category"]["id"] == str(ruled.id)
    assert [t["name"] for t in r.json()["tags"]] == ["alpha", "zeta"]

    # paired with a stored row by transfer matching: read back, its transfer shown
    TransactionFactory(account=savings, family=alice.family, amount="-75.00",
                       date="2024-05-03", name="In")  # fmt: skip
    r, sql = _create(alice, checking, amount="75.00")
    assert r.status_code == 201 and r.json()["transfer"] is not None
    assert [s for s in sql if REREAD in s]

    # an existing key: the stored row
    r, _ = _create(alice, checking, amount="1.00", external_id="ext-1", source="bank")
    assert r.status_code == 200 and r.json()["amount"] == "12.35"
