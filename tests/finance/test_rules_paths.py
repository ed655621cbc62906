"""A rule sees every new transaction, whatever its road (API single, bulk, CSV import, Lunch Flow
sync), before it is written; rules run in position order, each seeing the changes of those
before it (decisions.md "Rules")."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from finance.models import AccountBalance, Merchant, Transaction
from tests.factories import CategoryFactory, MerchantFactory, TagFactory
from tests.providers.conftest import connect, day, lunchflow, run_sync

pytestmark = pytest.mark.django_db
CARD = "CARD 4411 BLUE BOTTLE SF CA"


def rule(household, conditions, actions, **fields) -> dict:
    body = {"rule": {"name": "r", "conditions": conditions, "actions": actions, **fields}}
    r = household.client.post("/api/v1/rules", body, format="json")
    assert r.status_code == 201, r.content
    return r.json()


def contains(value: str, field: str = "name") -> dict:
    return {"field": field, "operator": "contains", "value": value}


def set_category(category) -> dict:
    return {"type": "set_category", "value": str(category.id)}


def create(household, account, **fields) -> dict:
    body = {
        "transaction": {
            "account_id": str(account.id),
            "date": "2024-05-02",
            "amount": "4.50",
            "name": CARD,
            **fields,
        }
    }
    r = household.client.post("/api/v1/transactions", body, format="json")
    assert r.status_code == 201, r.content
    return r.json()


def upload(household, account, content: bytes) -> str:
    """Upload a CSV to `account` (names in its Description column); the import's id."""
    file = SimpleUploadedFile("bank.csv", content, content_type="text/csv")
    r = household.client.post(
        "/api/v1/imports",
        {"file": file, "account_id": str(account.pk), "name_col_label": "Description"},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    return r.json()["data"]["id"]


def publish(household, import_id: str, capture_on_commit) -> list[str]:
    """Publish the import (its task run on commit); the SQL it ran. It must end complete,
    its readback matched."""
    seen: list[str] = []

    def record(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record), capture_on_commit(execute=True):
        assert household.client.post(f"/api/v1/imports/{import_id}/publish").status_code == 202
    done = household.client.get(f"/api/v1/imports/{import_id}").json()["data"]
    assert done["status"] == "complete", done
    assert done["verification"]["readback"]["status"] == "matched"
    return seen


def test_api_single_create(alice):
    coffee = CategoryFactory(family=alice.family, name="Coffee")
    made = rule(alice, [contains("blue bottle")], [set_category(coffee)])
    account = alice.account()
    txn = create(alice, account)
    assert txn["category"]["id"] == str(coffee.id)
    assert txn["rule_ids"] == [made["id"]]
    other = create(alice, account, name="Groceries")
    assert other["category"] is None and other["rule_ids"] == []
    shown = alice.client.get(f"/api/v1/transactions/{txn['id']}").json()
    assert shown["category"]["id"] == str(coffee.id) and shown["rule_ids"] == [made["id"]]


def test_bulk_create_with_tags_and_merchant(alice):
    coffee = CategoryFactory(family=alice.family)
    caffeine, card = TagFactory(family=alice.family), TagFactory(family=alice.family)
    made = rule(
        alice,
        [contains("blue bottle")],
        [
            set_category(coffee),
            {"type": "add_tags", "value": [str(caffeine.id)]},
            {"type": "remove_tags", "value": [str(card.id)]},
            {"type": "set_merchant", "value": "Blue Bottle"},
        ],
    )
    account = alice.account()
    items = [
        {"account_id": str(account.id), "date": "2024-05-02", "amount": "4.5", "name": CARD,
         "tag_ids": [str(card.id)]},
        {"account_id": str(account.id), "date": "2024-05-02", "amount": "9", "name": "Rent"},
    ]  # fmt: skip
    r = alice.client.post("/api/v1/transactions/bulk", {"transactions": items}, format="json")
    assert r.status_code == 200, r.content
    first, second = (x["transaction"] for x in r.json()["results"])
    merchant = Merchant.objects.get(family=alice.family, name="Blue Bottle")
    assert first["category"]["id"] == str(coffee.id)
    assert [t["id"] for t in first["tags"]] == [str(caffeine.id)]
    assert first["merchant"] == {"id": str(merchant.id), "name": "Blue Bottle"}
    assert first["rule_ids"] == [made["id"]]
    # the response is what a read answers
    assert alice.client.get(f"/api/v1/transactions/{first['id']}").json() == first
    assert second["category"] is None and second["tags"] == [] and second["rule_ids"] == []


def test_csv_import_publish(alice, django_capture_on_commit_callbacks, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    coffee = CategoryFactory(family=alice.family)
    bakery = TagFactory(family=alice.family, name="bakery")
    made = rule(
        alice,
        [contains("blue bottle")],
        [set_category(coffee), {"type": "add_tags", "value": [str(bakery.id)]}],
    )
    skip = rule(alice, [contains("transfer")], [{"type": "exclude", "value": True}])
    account = alice.account()
    content = (
        "Date,Description,Amount,Tags\r\n"
        f"2024-02-01,{CARD},-4.50,food\r\n"
        "2024-02-02,Groceries,-20.00,food\r\n"
        "2024-02-03,Transfer to savings,-100.00,\r\n"
    ).encode()
    import_id = upload(alice, account, content)
    seen = publish(alice, import_id, django_capture_on_commit_callbacks)
    # every row was changed by a rule or has a tag: all written from Python, no statement
    assert not [sql for sql in seen if "SELECT staged.*" in sql]
    by_name = {t.name: t for t in Transaction.objects.filter(account=account)}
    card = by_name[CARD]
    assert card.category_id == coffee.id and card.rule_ids == [made["id"]]
    assert sorted(card.tags.values_list("name", flat=True)) == ["bakery", "food"]
    assert list(by_name["Groceries"].tags.values_list("name", flat=True)) == ["food"]
    assert by_name["Groceries"].category_id is None and by_name["Groceries"].rule_ids == []
    moved = by_name["Transfer to savings"]
    assert moved.excluded and moved.rule_ids == [skip["id"]]
    # the excluded row is out of the balance
    last = AccountBalance.objects.filter(account=account).order_by("date").last()
    assert last.balance == Decimal("-24.50")


def test_csv_import_rows_no_rule_changes_go_by_one_statement(
    alice, django_capture_on_commit_callbacks, settings, tmp_path
):
    """With rules, every row is decided in Python, but only those a rule changed (or with tags
    to link) are written from there; the others go from the import's table in one INSERT ...
    SELECT, the written ones left out of it (so none is written twice)."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    coffee = CategoryFactory(family=alice.family)
    made = rule(alice, [contains("blue bottle")], [set_category(coffee)])
    account = alice.account()
    plain = [f"Groceries {i}" for i in range(5)]
    lines = [f"2024-02-0{1 + i},{name},-{10 + i}.00," for i, name in enumerate(plain)]
    content = "\r\n".join(
        ["Date,Description,Amount,Tags", f"2024-02-07,{CARD},-4.50,", *lines,
         "2024-02-08,Bakery,-3.00,food", ""]
    ).encode()  # fmt: skip
    import_id = upload(alice, account, content)
    seen = publish(alice, import_id, django_capture_on_commit_callbacks)
    statements = [sql for sql in seen if "SELECT staged.*" in sql]
    assert len(statements) == 1
    leave_out = "<> ALL" if connection.vendor == "postgresql" else "json_each"
    assert leave_out in statements[0]
    rows = {t.name: t for t in Transaction.objects.filter(account=account)}
    assert sorted(rows) == sorted([CARD, "Bakery", *plain])  # each once
    assert {t.id.version for t in rows.values()} == {7}  # time-ordered keys on both roads
    assert Transaction.objects.filter(account=account).count() == 7
    assert rows[CARD].category_id == coffee.id and rows[CARD].rule_ids == [made["id"]]
    assert list(rows["Bakery"].tags.values_list("name", flat=True)) == ["food"]
    for name in plain:
        assert rows[name].category_id is None and rows[name].rule_ids == []
        assert not rows[name].tags.exists()
    assert rows["Groceries 3"].amount == Decimal("13.00")
    last = AccountBalance.objects.filter(account=account).order_by("date").last()
    assert last.balance == -(Decimal("7.50") + sum(Decimal(10 + i) for i in range(5)))


__all__ = ["lunchflow"]  # the fake Lunch Flow server's fixture, used here


@pytest.fixture
def checking(lunchflow):
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "100")
    return lunchflow.scenario


def test_lunch_flow_sync_and_a_user_category_kept_across_resyncs(alice, checking):
    coffee, mine = CategoryFactory(family=alice.family), CategoryFactory(family=alice.family)
    made = rule(
        alice,
        [contains("blue bottle")],
        [set_category(coffee), {"type": "set_name", "value": "Blue Bottle Coffee"}],
    )
    row = checking.add_transaction("a1", "p1", day(2), -4.5, CARD, "BB SF", pending=True)
    groceries = checking.add_transaction("a1", "t2", day(3), -20, "Groceries", "Market")
    connection = connect(alice)
    assert run_sync(connection).status == "completed"
    txn = Transaction.objects.get(external_id="p1")
    assert (txn.category_id, txn.name, txn.rule_ids) == (coffee.id, "Blue Bottle Coffee",
                                                         [made["id"]])  # fmt: skip
    assert txn.merchant.name == "BB SF"
    assert Transaction.objects.get(external_id="t2").category_id is None

    # The household sets its own category; upstream then posts the row under a new name.
    r = alice.client.patch(
        f"/api/v1/transactions/{txn.id}",
        {"transaction": {"category_id": str(mine.id)}},
        format="json",
    )
    assert r.status_code == 200 and r.json()["category"]["id"] == str(mine.id)
    row.update(isPending=False, description="BLUE BOTTLE POSTED", merchant="Blue Bottle Inc")
    # The household also confirms a name that is still upstream's own: it is theirs now.
    plain = Transaction.objects.get(external_id="t2")
    r = alice.client.patch(
        f"/api/v1/transactions/{plain.id}", {"transaction": {"name": "Groceries"}}, format="json"
    )
    assert r.status_code == 200
    groceries.update(description="GROCERIES 0412")
    for _ in range(2):
        sync = run_sync(connection)
        assert sync.status == "completed"
        txn.refresh_from_db()
        assert txn.category_id == mine.id  # the household's edit
        assert txn.name == "Blue Bottle Coffee"  # the rule's name, not upstream's
        assert not txn.pending and txn.provider_snapshot["name"] == "BLUE BOTTLE POSTED"
        assert txn.merchant.name == "Blue Bottle Inc"  # no rule or user set it: follows
        assert Transaction.objects.get(pk=plain.pk).name == "Groceries"
    assert sync.stats["transactions_added"] == 0


def test_order_and_chaining(alice):
    coffee, drinks = CategoryFactory(family=alice.family), CategoryFactory(family=alice.family)
    # Created out of order: positions decide.
    third = rule(alice, [contains("blue bottle")], [set_category(drinks)], position=3)
    first = rule(
        alice, [contains("card 4411")], [{"type": "set_name", "value": "Blue Bottle"}], position=1
    )
    second = rule(
        alice,
        [{"field": "name", "operator": "equals", "value": "blue bottle"}],
        [set_category(coffee), {"type": "set_notes", "value": "renamed"}],
        position=2,
    )
    txn = create(alice, alice.account())
    # first renamed it; second matched the new name; third then set its own category
    assert txn["name"] == "Blue Bottle" and txn["notes"] == "renamed"
    assert txn["category"]["id"] == str(drinks.id)
    assert txn["rule_ids"] == [first["id"], second["id"], third["id"]]
    stored = Transaction.objects.get(pk=txn["id"])
    assert stored.rule_changes == [
        {"rule": first["id"], "set": ["name"]},
        {"rule": second["id"], "set": ["category", "notes"]},
        {"rule": third["id"], "set": ["category"]},
    ]
    # An inactive rule does nothing; a rule that changes nothing is not listed.
    alice.client.patch(f"/api/v1/rules/{third['id']}", {"rule": {"active": False}}, format="json")
    again = create(alice, alice.account(), notes="renamed")
    assert again["category"]["id"] == str(coffee.id)
    assert again["rule_ids"] == [first["id"], second["id"]]


def test_all_and_any(alice):
    big, either = CategoryFactory(family=alice.family), CategoryFactory(family=alice.family)
    conditions = [contains("market"), {"field": "amount", "operator": "gt", "value": "100"}]
    rule(alice, conditions, [set_category(big)], match="all")
    rule(alice, conditions, [{"type": "set_notes", "value": "either"}], match="any")
    account = alice.account()
    both = create(alice, account, name="Super Market", amount="150")
    name_only = create(alice, account, name="Super Market", amount="15")
    amount_only = create(alice, account, name="Rent", amount="1500")
    neither = create(alice, account, name="Rent", amount="15")
    assert both["category"]["id"] == str(big.id) and both["notes"] == "either"
    for txn in (name_only, amount_only):
        assert txn["category"] is None and txn["notes"] == "either"
    assert neither["category"] is None and neither["notes"] is None
    assert either  # unused category: only two rules


def test_amount_date_and_id_conditions(alice):
    salary, travel = CategoryFactory(family=alice.family), CategoryFactory(family=alice.family)
    checking, card = alice.account(), alice.account(account_type="credit_card")
    income = rule(
        alice,
        [
            {"field": "amount", "operator": "between", "value": ["-5000", "-1000"]},
            {"field": "account_id", "operator": "equals", "value": str(checking.id)},
        ],
        [set_category(salary)],
    )
    rule(
        alice,
        [
            {"field": "account_id", "operator": "in", "value": [str(card.id)]},
            {"field": "category_id", "operator": "is_empty"},
            {"field": "date", "operator": "gte", "value": "2024-06-01"},
        ],
        [set_category(travel)],
    )
    tagged = rule(
        alice,
        [{"field": "category_id", "operator": "equals", "value": str(salary.id)}],
        [{"type": "set_notes", "value": "pay day"}],
    )
    pay = create(alice, checking, name="ACME", amount="2500", nature="income")
    assert pay["category"]["id"] == str(salary.id) and pay["notes"] == "pay day"
    assert pay["rule_ids"] == [income["id"], tagged["id"]]
    assert create(alice, card, name="ACME", amount="2500", nature="income")["category"] is None
    assert create(alice, checking, name="Bonus", amount="-500")["category"] is None
    assert create(alice, card, name="Hotel", date="2024-07-01")["category"]["id"] == str(travel.id)
    assert create(alice, card, name="Hotel", date="2024-05-01")["category"] is None
    given = CategoryFactory(family=alice.family)
    kept = create(alice, card, name="Hotel", date="2024-07-01", category_id=str(given.id))
    assert kept["category"]["id"] == str(given.id)  # not empty: the travel rule does not match


def test_merchant_and_text_operators(alice):
    known = MerchantFactory(family=alice.family, name="Roastery")
    rule(
        alice,
        [{"field": "name", "operator": "starts_with", "value": "CARD "}],
        [{"type": "set_merchant", "value": str(known.id)}],
    )
    rule(
        alice,
        [{"field": "merchant", "operator": "equals", "value": "roastery"},
         {"field": "name", "operator": "ends_with", "value": "SF CA"},
         {"field": "name", "operator": "matches", "value": r"\d{4}\s+blue"},
         {"field": "notes", "operator": "is_empty"},
         {"field": "source", "operator": "is_empty"},
         {"field": "currency", "operator": "equals", "value": "usd"}],
        [{"type": "set_notes", "value": "all six"}],
    )  # fmt: skip
    txn = create(alice, alice.account())
    assert txn["merchant"]["id"] == str(known.id) and txn["notes"] == "all six"
    keyed = create(alice, alice.account(), external_id="x-1")  # source "api": not empty
    assert keyed["notes"] is None


def test_a_runaway_expression_is_time_bounded(alice):
    rule(
        alice,
        [{"field": "name", "operator": "matches", "value": r"^(\w+\s?)*$"}],
        [{"type": "set_notes", "value": "matched"}],
    )
    account = alice.account()
    started = time.monotonic()
    txn = create(alice, account, name="a" * 200 + "!")
    assert time.monotonic() - started < 5
    assert txn["notes"] is None and txn["rule_ids"] == []
    assert create(alice, account, name="plain words")["notes"] == "matched"
