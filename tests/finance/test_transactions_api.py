from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from finance.models import Transaction, Transfer
from tests.conftest import assert_error
from tests.factories import CategoryFactory, MerchantFactory, TagFactory, TransactionFactory

URL = "/api/v1/transactions"


def body(account, **fields):
    return {
        "transaction": {
            "account_id": str(account.id),
            "date": "2024-05-02",
            "amount": 25,
            "name": "Coffee beans",
            **fields,
        }
    }


@pytest.mark.django_db
class TestCreate:
    def test_creates_with_documented_shape(self, alice):
        account = alice.account()
        category = CategoryFactory(family=alice.family)
        merchant = MerchantFactory(family=alice.family)
        tag = TagFactory(family=alice.family)
        r = alice.client.post(
            URL,
            body(
                account,
                notes="n",
                category_id=str(category.id),
                merchant_id=str(merchant.id),
                tag_ids=[str(tag.id)],
            ),
            format="json",
        )
        assert r.status_code == 201, r.content
        data = r.json()
        assert data["amount"] == "25.00"
        assert data["currency"] == "USD"
        assert data["classification"] == "expense"
        assert data["amount_cents"] == 2500 and data["signed_amount_cents"] == -2500
        assert data["account"] == {
            "id": str(account.id),
            "name": account.name,
            "account_type": "depository",
            "status": "active",
        }
        assert data["category"]["id"] == str(category.id)
        assert data["merchant"] == {"id": str(merchant.id), "name": merchant.name}
        assert [t["id"] for t in data["tags"]] == [str(tag.id)]
        assert data["transfer"] is None and data["pending"] is False
        assert data["created_at"].endswith("Z")
        assert data["external_id"] is None and data["source"] is None

    @pytest.mark.parametrize(
        ("nature", "amount", "stored", "classification"),
        [
            ("income", 10, "-10.00", "income"),
            ("inflow", -10, "-10.00", "income"),
            ("expense", -10, "10.00", "expense"),
            ("outflow", 10, "10.00", "expense"),
            (None, -7.5, "-7.50", "income"),
        ],
    )
    def test_nature_sets_the_sign(self, alice, nature, amount, stored, classification):
        extra = {"nature": nature} if nature else {}
        r = alice.client.post(URL, body(alice.account(), amount=amount, **extra), format="json")
        assert r.status_code == 201
        assert r.json()["amount"] == stored
        assert r.json()["classification"] == classification

    def test_currency_precision_jpy(self, alice):
        r = alice.client.post(
            URL, body(alice.account(currency="JPY"), amount=1200, currency="JPY"), format="json"
        )
        assert r.json()["amount"] == "1200"
        assert r.json()["amount_cents"] == 1200

    def test_description_in_place_of_name(self, alice):
        payload = body(alice.account())
        del payload["transaction"]["name"]
        payload["transaction"]["description"] = "From description"
        r = alice.client.post(URL, payload, format="json")
        assert r.status_code == 201 and r.json()["name"] == "From description"

    def test_idempotent_by_external_id(self, alice):
        account = alice.account()
        first = alice.client.post(URL, body(account, external_id="ext-1"), format="json")
        assert first.status_code == 201
        assert first.json()["source"] == "api"
        again = alice.client.post(
            URL, body(account, external_id="ext-1", amount=99, name="changed"), format="json"
        )
        assert again.status_code == 200
        assert again.json() == first.json()
        other_source = alice.client.post(
            URL, body(account, external_id="ext-1", source="bank"), format="json"
        )
        assert other_source.status_code == 201
        assert Transaction.objects.filter(account=account).count() == 2

    def test_source_without_external_id_is_422(self, alice):
        r = alice.client.post(URL, body(alice.account(), source="bank"), format="json")
        errors = assert_error(r, 422, "validation_failed")["errors"]
        assert any(e.startswith("transaction.source") for e in errors)

    def test_missing_fields_one_message_each(self, alice):
        r = alice.client.post(URL, {"transaction": {}}, format="json")
        errors = assert_error(r, 422, "validation_failed")["errors"]
        for field in ("account_id", "date", "amount"):
            assert any(e.startswith(f"transaction.{field}:") for e in errors), errors

    def test_missing_root_key(self, alice):
        r = alice.client.post(URL, {"account_id": "x"}, format="json")
        errors = assert_error(r, 422, "validation_failed")["errors"]
        assert errors == ["transaction: This field is required."]

    def test_foreign_ids_are_422_naming_the_field(self, alice, charlie):
        theirs = charlie.account()
        r = alice.client.post(URL, body(theirs), format="json")
        assert assert_error(r, 422, "validation_failed")["errors"] == [
            "account_id: does not exist in this household"
        ]
        mine = alice.account()
        r = alice.client.post(
            URL,
            body(
                mine,
                category_id=str(CategoryFactory(family=charlie.family).id),
                tag_ids=[str(TagFactory(family=charlie.family).id)],
            ),
            format="json",
        )
        errors = assert_error(r, 422, "validation_failed")["errors"]
        assert any(e.startswith("category_id") for e in errors)
        assert any(e.startswith("tag_ids") for e in errors)
        assert Transaction.objects.count() == 0

    @pytest.mark.parametrize(
        "bad",
        [
            {"date": "2024-5-2"},
            {"date": "02/05/2024"},
            {"amount": "abc"},
            {"amount": True},
            {"currency": "ZZZ"},
            {"nature": "gift"},
            {"amount": "1e30"},
            {"name": "a\x00b"},
        ],
    )
    def test_invalid_values(self, alice, bad):
        r = alice.client.post(URL, body(alice.account(), **bad), format="json")
        assert_error(r, 422, "validation_failed")

    def test_bad_json_is_400(self, alice):
        r = alice.client.post(URL, "{not json", content_type="application/json")
        assert_error(r, 400, "bad_request")
        r = alice.client.post(URL, "[1,2]", content_type="application/json")
        assert_error(r, 400, "bad_request")
        r = alice.client.post(URL, "[" * 100000 + "]" * 100000, content_type="application/json")
        assert_error(r, 400, "bad_request")


@pytest.mark.django_db
class TestReadUpdateDelete:
    def test_get_and_404s(self, alice, charlie):
        txn = TransactionFactory(account=alice.account())
        assert alice.client.get(f"{URL}/{txn.id}").json()["id"] == str(txn.id)
        assert_error(charlie.client.get(f"{URL}/{txn.id}"), 404, "not_found")
        assert_error(alice.client.get(f"{URL}/not-a-uuid"), 404, "not_found")
        assert_error(charlie.client.delete(f"{URL}/{txn.id}"), 404, "not_found")
        assert_error(
            charlie.client.patch(f"{URL}/{txn.id}", {"transaction": {"name": "x"}}, format="json"),
            404,
            "not_found",
        )

    def test_patch_fields_and_tags(self, alice):
        account = alice.account()
        txn = TransactionFactory(account=account, amount=Decimal("5"))
        tag1, tag2 = TagFactory(family=alice.family), TagFactory(family=alice.family)
        r = alice.client.patch(
            f"{URL}/{txn.id}",
            {
                "transaction": {
                    "name": "Renamed",
                    "tag_ids": [str(tag1.id), str(tag2.id)],
                    "amount": 8,
                    "nature": "income",
                }
            },
            format="json",
        )
        assert r.status_code == 200, r.content
        assert r.json()["name"] == "Renamed" and r.json()["amount"] == "-8.00"
        assert len(r.json()["tags"]) == 2
        r = alice.client.put(f"{URL}/{txn.id}", {"transaction": {"tag_ids": []}}, format="json")
        assert r.json()["tags"] == [] and r.json()["name"] == "Renamed"

    def test_delete(self, alice):
        txn = TransactionFactory(account=alice.account())
        r = alice.client.delete(f"{URL}/{txn.id}")
        assert r.status_code == 200
        assert not Transaction.objects.filter(pk=txn.pk).exists()

    def test_balance_follows_writes(self, alice):
        account = alice.account()
        alice.client.post(URL, body(account, amount=40), format="json")
        r = alice.client.post(URL, body(account, amount=-100), format="json")
        account.refresh_from_db()
        assert account.balance == Decimal("60")
        alice.client.delete(f"{URL}/{r.json()['id']}")
        account.refresh_from_db()
        assert account.balance == Decimal("-40")


@pytest.mark.django_db
class TestList:
    def test_search_pages_newest_first_like_every_list(self, alice):
        account = alice.account()
        days = [dt.date(2024, 3, 9), dt.date(2024, 1, 2), dt.date(2024, 5, 1), dt.date(2024, 2, 7)]
        for i, day in enumerate(days):
            TransactionFactory(account=account, date=day, name=f"Coffee shop {i}")
            TransactionFactory(account=account, date=day, name="Rent")
        r = alice.client.get(URL, {"search": "coffee", "per_page": 3})
        assert r.status_code == 200, r.content
        assert [t["date"] for t in r.json()["transactions"]] == [
            "2024-05-01",
            "2024-03-09",
            "2024-02-07",
        ]
        assert r.json()["pagination"]["total_count"] == 4
        page2 = alice.client.get(URL, {"search": "coffee", "per_page": 3, "page": 2}).json()
        assert [t["date"] for t in page2["transactions"]] == ["2024-01-02"]

    def test_pagination_body_and_clamp(self, alice, charlie):
        account = alice.account()
        for i in range(30):
            TransactionFactory(account=account, date=dt.date(2024, 1, 1) + dt.timedelta(days=i))
        TransactionFactory(account=charlie.account())
        r = alice.client.get(URL)
        data = r.json()
        assert len(data["transactions"]) == 25
        assert data["pagination"] == {
            "page": 1,
            "per_page": 25,
            "total_count": 30,
            "total_pages": 2,
        }
        assert data["transactions"][0]["date"] == "2024-01-30"
        r = alice.client.get(URL, {"per_page": 1000, "page": 1})
        assert r.json()["pagination"]["per_page"] == 100
        assert len(r.json()["transactions"]) == 30
        assert alice.client.get(URL, {"page": 9}).json()["transactions"] == []
        assert_error(alice.client.get(URL, {"page": "x"}), 422, "validation_failed")
        assert r["X-RateLimit-Limit"]

    def test_filters(self, alice):
        a1, a2 = alice.account(), alice.account()
        cat = CategoryFactory(family=alice.family)
        merchant = MerchantFactory(family=alice.family, name="Blue Bottle")
        tag = TagFactory(family=alice.family)
        t1 = TransactionFactory(
            account=a1,
            amount=Decimal("10"),
            date=dt.date(2024, 1, 5),
            category=cat,
            name="Groceries",
        )
        t2 = TransactionFactory(
            account=a2,
            amount=Decimal("-500"),
            date=dt.date(2024, 2, 5),
            merchant=merchant,
            notes="salary note",
        )
        t2.tags.add(tag)

        def ids(**params):
            r = alice.client.get(URL, params)
            assert r.status_code == 200, r.content
            return {t["id"] for t in r.json()["transactions"]}

        assert ids(account_id=a1.id) == {str(t1.id)}
        assert ids(**{"account_ids[]": [a1.id, a2.id]}) == {str(t1.id), str(t2.id)}
        assert ids(category_id=cat.id) == {str(t1.id)}
        assert ids(merchant_id=merchant.id) == {str(t2.id)}
        assert ids(**{"tag_ids[]": [tag.id]}) == {str(t2.id)}
        assert ids(start_date="2024-02-01") == {str(t2.id)}
        assert ids(end_date="2024-01-31") == {str(t1.id)}
        assert ids(min_amount="0") == {str(t1.id)}
        assert ids(max_amount="-100") == {str(t2.id)}
        assert ids(type="income") == {str(t2.id)}
        assert ids(type="expense") == {str(t1.id)}
        assert ids(search="blue") == {str(t2.id)}
        assert ids(search="SALARY") == {str(t2.id)}
        assert ids(search="grocer") == {str(t1.id)}
        for bad in (
            {"account_id": "nope"},
            {"start_date": "2024-13-01"},
            {"type": "x"},
            {"min_amount": "abc"},
        ):
            body = assert_error(alice.client.get(URL, bad), 422, "validation_failed")
            assert next(iter(bad)) in body["errors"][0]

    def test_page_of_100_costs_constant_queries(self, alice, django_assert_max_num_queries):
        accounts = [alice.account() for _ in range(3)]
        tags = [TagFactory(family=alice.family) for _ in range(3)]
        for i in range(100):
            txn = TransactionFactory(
                account=accounts[i % 3],
                category=CategoryFactory(family=alice.family),
                merchant=MerchantFactory(family=alice.family),
            )
            txn.tags.set(tags[: i % 4])
        # The first count after 100 single writes folds PostgreSQL's counter deltas (once).
        alice.client.get(URL, {"per_page": 100})
        with django_assert_max_num_queries(6):
            r = alice.client.get(URL, {"per_page": 100})
        assert len(r.json()["transactions"]) == 100

    def test_transfer_legs_on_a_page_cost_the_same_queries_however_many(self, alice):
        """Each leg lists its transfer and the other leg's account; the legs come by prefetch
        for the page's rows, so 2 and 20 transfers on a page cost the same queries."""
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        checking, savings = alice.account(name="Checking"), alice.account(name="Savings")

        def page_with(transfers: int) -> tuple[int, list]:
            for i in range(transfers):
                out = TransactionFactory(account=checking, amount=Decimal(10 + i))
                inn = TransactionFactory(account=savings, amount=Decimal(-10 - i))
                Transfer.objects.create(
                    family=alice.family, inflow_transaction=inn, outflow_transaction=out
                )
            alice.client.get(URL, {"per_page": 100})  # counters folded, if due
            with CaptureQueriesContext(connection) as ctx:
                r = alice.client.get(URL, {"per_page": 100})
            return len(ctx.captured_queries), r.json()["transactions"]

        few, rows = page_with(2)
        many, rows = page_with(18)
        assert few == many
        assert len(rows) == 40
        for row in rows:
            other = "Savings" if row["account"]["name"] == "Checking" else "Checking"
            assert row["transfer"]["other_account"]["name"] == other
