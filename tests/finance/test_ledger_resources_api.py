"""Accounts, categories, merchants and tags through the API: the generic resource tests
(list, get, create, update, delete, pagination, another household 404, read key refused),
then each resource's own rules."""

from __future__ import annotations

from decimal import Decimal

import pytest

from finance.ledger.transfer_matching import transfers_match
from finance.models import Account, Category, Merchant, Tag, Transaction, Transfer
from tests.conftest import assert_error
from tests.factories import (
    CategoryFactory,
    MerchantFactory,
    TagFactory,
    TransactionFactory,
)

RESOURCES = {
    # plural: (root key, factory, create body, update body)
    "accounts": (
        "account",
        lambda family, i: Account.objects.create(family=family, name=f"Acc {i}", currency="USD"),
        {"name": "Brokerage", "account_type": "investment", "institution_name": "Big Bank"},
        {"name": "Renamed"},
    ),
    "categories": (
        "category",
        lambda family, i: CategoryFactory(family=family, name=f"Cat {i}"),
        {"name": "Groceries", "color": "#112233", "icon": "cart"},
        {"name": "Renamed", "color": "#abcdef"},
    ),
    "merchants": (
        "merchant",
        lambda family, i: MerchantFactory(family=family, name=f"M {i}"),
        {"name": "Corner shop"},
        {"name": "Renamed"},
    ),
    "tags": (
        "tag",
        lambda family, i: TagFactory(family=family, name=f"T {i}"),
        {"name": "holiday", "color": "#00FF00"},
        {"name": "Renamed"},
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("plural", list(RESOURCES))
class TestGeneric:
    def test_crud(self, alice, plural):
        root, _, create, update = RESOURCES[plural]
        url = f"/api/v1/{plural}"
        r = alice.client.post(url, {root: create}, format="json")
        assert r.status_code == 201, r.content
        created = r.json()
        for key, value in create.items():
            assert created[key] == value
        assert created["created_at"].endswith("Z")
        r = alice.client.get(f"{url}/{created['id']}")
        assert r.status_code == 200 and r.json() == created
        for method in ("patch", "put"):
            r = getattr(alice.client, method)(
                f"{url}/{created['id']}", {root: update}, format="json"
            )
            assert r.status_code == 200, r.content
            assert r.json()["name"] == "Renamed"
        r = alice.client.get(url)
        assert [row["id"] for row in r.json()[plural]] == [created["id"]]
        r = alice.client.delete(f"{url}/{created['id']}")
        assert r.status_code == 200 and r.json() == {"message": f"{root.title()} deleted"}
        assert_error(alice.client.get(f"{url}/{created['id']}"), 404, "not_found")

    def test_missing_root_key_is_422(self, alice, plural):
        root, _, create, _ = RESOURCES[plural]
        r = alice.client.post(f"/api/v1/{plural}", create, format="json")
        body = assert_error(r, 422, "validation_failed")
        assert any(e.startswith(f"{root}:") for e in body["errors"])
        r = alice.client.post(f"/api/v1/{plural}", {root: {}}, format="json")
        body = assert_error(r, 422, "validation_failed")
        assert f"{root}.name: This field is required." in body["errors"]

    def test_pagination_newest_first(self, alice, plural):
        _, make, _, _ = RESOURCES[plural]
        made = [make(alice.family, i) for i in range(3)]
        r = alice.client.get(f"/api/v1/{plural}", {"per_page": 2, "page": 2})
        assert r.status_code == 200
        body = r.json()
        assert body["pagination"] == {"page": 2, "per_page": 2, "total_count": 3, "total_pages": 2}
        assert [row["id"] for row in body[plural]] == [str(made[0].id)]

    def test_other_household_is_404_and_invisible(self, alice, charlie, plural):
        root, make, _, update = RESOURCES[plural]
        theirs = make(charlie.family, 0)
        url = f"/api/v1/{plural}/{theirs.id}"
        assert_error(alice.client.get(url), 404, "not_found")
        assert_error(alice.client.patch(url, {root: update}, format="json"), 404, "not_found")
        assert_error(alice.client.delete(url), 404, "not_found")
        assert_error(alice.client.get(f"/api/v1/{plural}/not-a-uuid"), 404, "not_found")
        assert alice.client.get(f"/api/v1/{plural}").json()[plural] == []

    def test_read_key_refused_on_writes(self, alice, plural):
        root, make, create, update = RESOURCES[plural]
        mine = make(alice.family, 0)
        url = f"/api/v1/{plural}"
        assert_error(
            alice.read_client.post(url, {root: create}, format="json"), 403, "insufficient_scope"
        )
        assert_error(
            alice.read_client.patch(f"{url}/{mine.id}", {root: update}, format="json"),
            403,
            "insufficient_scope",
        )
        assert_error(alice.read_client.delete(f"{url}/{mine.id}"), 403, "insufficient_scope")
        assert alice.read_client.get(f"{url}/{mine.id}").status_code == 200


@pytest.mark.django_db
class TestAccounts:
    def test_defaults_and_shape(self, alice):
        alice.family.currency = "EUR"
        alice.family.save()
        r = alice.client.post("/api/v1/accounts", {"account": {"name": "Cash"}}, format="json")
        body = r.json()
        assert set(body) == {
            "id",
            "name",
            "account_type",
            "status",
            "currency",
            "balance",
            "cash_balance",
            "holdings_value",
            "classification",
            "institution_name",
            "created_at",
            "updated_at",
        }
        assert body["currency"] == "EUR" and body["balance"] == "0.00"
        assert body["cash_balance"] is None and body["holdings_value"] is None
        assert body["account_type"] == "depository" and body["status"] == "active"
        assert body["classification"] == "asset" and body["institution_name"] is None
        r = alice.client.post(
            "/api/v1/accounts",
            {"account": {"name": "Yen", "currency": "jpy", "account_type": "loan"}},
            format="json",
        )
        assert r.json()["currency"] == "JPY" and r.json()["balance"] == "0"
        assert r.json()["classification"] == "liability"

    def test_validation(self, alice):
        for fields, named in [
            ({"name": "x", "account_type": "boat"}, "account.account_type"),
            ({"name": "x", "currency": "ZZZ"}, "account.currency"),
            ({"name": "x", "status": "gone"}, "account.status"),
        ]:
            body = assert_error(
                alice.client.post("/api/v1/accounts", {"account": fields}, format="json"),
                422,
                "validation_failed",
            )
            assert body["errors"][0].startswith(named)

    def test_filters(self, alice):
        alice.account(name="A", account_type="credit_card")
        alice.account(name="B", status="disabled")
        alice.account(name="C", status="draft")

        def names(**params):
            r = alice.client.get("/api/v1/accounts", params)
            assert r.status_code == 200
            return sorted(a["name"] for a in r.json()["accounts"])

        assert names() == ["A", "C"]
        assert names(include_disabled="true") == ["A", "B", "C"]
        assert names(status="disabled") == ["B"]
        assert names(account_type="credit_card") == ["A"]
        for bad in ({"account_type": "x"}, {"status": "x"}, {"include_disabled": "maybe"}):
            assert_error(alice.client.get("/api/v1/accounts", bad), 422, "validation_failed")

    def test_delete_with_transactions_needs_cascade(self, alice):
        account = alice.account(name="Old")
        other = alice.account()
        out = TransactionFactory(account=account, amount=Decimal("10"))
        inflow = TransactionFactory(account=other, amount=Decimal("-10"))
        transfers_match(family=alice.family, account_ids=[account.pk])
        body = assert_error(alice.client.delete(f"/api/v1/accounts/{account.id}"), 409, "conflict")
        assert "1 transaction" in body["message"] and "cascade=true" in body["message"]
        assert Transaction.objects.filter(pk=out.pk).exists()
        r = alice.client.delete(f"/api/v1/accounts/{account.id}", QUERY_STRING="cascade=true")
        assert r.status_code == 200
        assert not Account.objects.filter(pk=account.pk).exists()
        assert not Transaction.objects.filter(pk=out.pk).exists()
        assert Transfer.objects.count() == 0
        inflow.refresh_from_db()
        assert inflow.kind == "standard"

    def test_currency_locked_once_used_and_type_change_recomputes(self, alice):
        account = alice.account()
        TransactionFactory(account=account, amount=Decimal("10"))
        url = f"/api/v1/accounts/{account.id}"
        r = alice.client.patch(url, {"account": {"currency": "EUR"}}, format="json")
        assert_error(r, 422, "validation_failed")
        from finance.ledger.balances import account_balances_refresh

        account_balances_refresh(account_dates={account.pk: None})
        assert alice.client.get(url).json()["balance"] == "-10.00"
        r = alice.client.patch(url, {"account": {"account_type": "credit_card"}}, format="json")
        assert r.json()["balance"] == "10.00"


@pytest.mark.django_db
class TestCatalog:
    @pytest.mark.parametrize("plural", ["categories", "merchants", "tags"])
    def test_duplicate_name_is_422(self, alice, charlie, plural):
        root = RESOURCES[plural][0]
        url = f"/api/v1/{plural}"
        first = alice.client.post(url, {root: {"name": "Food"}}, format="json").json()
        body = assert_error(
            alice.client.post(url, {root: {"name": "food"}}, format="json"),
            422,
            "validation_failed",
        )
        assert body["errors"][0].startswith("name:")
        other = alice.client.post(url, {root: {"name": "Other"}}, format="json").json()
        r = alice.client.patch(f"{url}/{other['id']}", {root: {"name": "Food"}}, format="json")
        assert_error(r, 422, "validation_failed")
        # renaming to its own name is fine, and another household may use the name
        r = alice.client.patch(f"{url}/{first['id']}", {root: {"name": "Food"}}, format="json")
        assert r.status_code == 200
        assert charlie.client.post(url, {root: {"name": "Food"}}, format="json").status_code == 201

    @pytest.mark.parametrize("plural", ["categories", "tags"])
    @pytest.mark.parametrize("color", ["red", "#12345", "#1234567", "#GGGGGG", "123456"])
    def test_colors(self, alice, plural, color):
        root = RESOURCES[plural][0]
        body = assert_error(
            alice.client.post(
                f"/api/v1/{plural}", {root: {"name": "x", "color": color}}, format="json"
            ),
            422,
            "validation_failed",
        )
        assert body["errors"] == [f"{root}.color: must be a color in #RRGGBB format"]

    def test_categories_nest_two_levels(self, alice, charlie):
        url = "/api/v1/categories"
        root = alice.client.post(url, {"category": {"name": "Food"}}, format="json").json()
        child = alice.client.post(
            url, {"category": {"name": "Bakery", "parent_id": root["id"]}}, format="json"
        ).json()
        assert child["parent_id"] == root["id"]
        r = alice.client.post(
            url, {"category": {"name": "Bread", "parent_id": child["id"]}}, format="json"
        )
        body = assert_error(r, 422, "validation_failed")
        assert body["errors"][0].startswith("parent_id:")
        other = alice.client.post(url, {"category": {"name": "Home"}}, format="json").json()
        r = alice.client.patch(
            f"{url}/{root['id']}", {"category": {"parent_id": other["id"]}}, format="json"
        )
        assert_error(r, 422, "validation_failed")  # root has a child: would be three levels
        foreign = CategoryFactory(family=charlie.family)
        r = alice.client.post(
            url, {"category": {"name": "Z", "parent_id": str(foreign.id)}}, format="json"
        )
        assert_error(r, 422, "validation_failed")
        assert [
            c["id"] for c in alice.client.get(url, {"parent_id": root["id"]}).json()["categories"]
        ] == [child["id"]]
        roots = alice.client.get(url, {"roots_only": "true"}).json()["categories"]
        assert sorted(c["name"] for c in roots) == ["Food", "Home"]
        assert_error(alice.client.get(url, {"parent_id": "x"}), 422, "validation_failed")

    def test_deleting_detaches_and_loses_no_transaction(self, alice):
        category = CategoryFactory(family=alice.family)
        merchant = MerchantFactory(family=alice.family)
        tag = TagFactory(family=alice.family)
        txn = TransactionFactory(account=alice.account(), category=category, merchant=merchant)
        txn.tags.add(tag)
        for plural, obj in (("categories", category), ("merchants", merchant), ("tags", tag)):
            assert alice.client.delete(f"/api/v1/{plural}/{obj.id}").status_code == 200
        txn.refresh_from_db()
        assert txn.category is None and txn.merchant is None and txn.tags.count() == 0
        assert not (Category.objects.exists() or Merchant.objects.exists() or Tag.objects.exists())
