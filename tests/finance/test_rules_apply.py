"""A rule over the transactions already stored: the preview changes nothing; the apply runs in
the background in chunks, counts what it matched and changed, and a second apply changes
nothing. Fields the household edited itself are never changed by a rule."""

from __future__ import annotations

import pytest

from finance.models import AccountBalance, Merchant, RuleRun, Transaction
from finance.rules import existing
from tests.conftest import assert_error
from tests.factories import CategoryFactory, TagFactory

pytestmark = pytest.mark.django_db
RULES = "/api/v1/rules"


def create(household, account, name: str, date: str = "2024-05-02", amount: str = "10") -> dict:
    body = {
        "transaction": {"account_id": str(account.id), "date": date, "amount": amount, "name": name}
    }
    r = household.client.post("/api/v1/transactions", body, format="json")
    assert r.status_code == 201, r.content
    return r.json()


def coffee_rule(household, *actions: dict, **fields) -> dict:
    body = {
        "rule": {
            "name": "Coffee",
            "conditions": [{"field": "name", "operator": "contains", "value": "coffee"}],
            "actions": list(actions),
            **fields,
        }
    }
    r = household.client.post(RULES, body, format="json")
    assert r.status_code == 201, r.content
    return r.json()


def stored(household) -> list[tuple]:
    """Everything a rule could change, for every row of the household."""
    rows = Transaction.objects.filter(family=household.family).order_by("id")
    return [
        (t.id, t.name, t.notes, t.category_id, t.merchant_id, t.excluded, t.rule_changes,
         t.updated_at, sorted(t.tags.values_list("id", flat=True)))
        for t in rows
    ]  # fmt: skip


def apply(household, rule_id: str, capture) -> dict:
    with capture(execute=True):
        r = household.client.post(f"{RULES}/{rule_id}/apply")
    assert r.status_code == 202, r.content
    assert r.json()["rule_id"] == rule_id and r.json()["status"] == "pending"
    run = household.client.get(f"/api/v1/rule_runs/{r.json()['id']}")
    assert run.status_code == 200
    return run.json()


def test_preview_counts_and_lists_without_changing_anything(alice):
    account = alice.account()
    category = CategoryFactory(family=alice.family)
    for day in range(1, 31):
        create(alice, account, f"Coffee {day}", date=f"2024-05-{day:02d}")
    create(alice, account, "Rent", date="2024-05-15")
    already = create(alice, account, "Coffee again", date="2024-04-01")
    alice.client.patch(
        f"/api/v1/transactions/{already['id']}",
        {"transaction": {"category_id": str(category.id)}},
        format="json",
    )
    rule = coffee_rule(
        alice,
        {"type": "set_category", "value": str(category.id)},
        {"type": "set_merchant", "value": "Cafe Nouveau"},
    )
    before = stored(alice)
    r = alice.client.post(f"{RULES}/{rule['id']}/preview")
    assert r.status_code == 200, r.content
    body = r.json()
    # 30 coffees, and the one the household categorised itself: its merchant still changes
    assert body["count"] == 31
    dates = [t["date"] for t in body["transactions"]]
    assert len(dates) == 25 and dates == [f"2024-05-{d:02d}" for d in range(30, 5, -1)]
    assert all(t["category"] is None for t in body["transactions"])  # shown as stored
    assert stored(alice) == before
    assert not Merchant.objects.filter(name="Cafe Nouveau").exists()


def test_apply_counts_changes_and_a_second_apply_changes_nothing(
    alice, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(existing, "CHUNK", 7)  # several chunks, each its own ledger batch
    account = alice.account()
    category = CategoryFactory(family=alice.family)
    tag = TagFactory(family=alice.family)
    for day in range(1, 21):
        create(alice, account, f"Coffee {day}", date=f"2024-05-{day:02d}", amount="5")
    create(alice, account, "Rent", date="2024-05-15", amount="500")
    done = create(alice, account, "Coffee done", date="2024-05-03", amount="5")
    done_txn = Transaction.objects.get(pk=done["id"])
    rule = coffee_rule(
        alice,
        {"type": "set_category", "value": str(category.id)},
        {"type": "add_tags", "value": [str(tag.id)]},
        {"type": "exclude", "value": True},
        active=False,  # an inactive rule applies when asked to
    )
    # GIVEN one coffee that already looks as the rule would make it
    from finance.ledger import ledger_batch

    with ledger_batch(family=alice.family) as batch:
        done_txn.category, done_txn.excluded = category, True
        batch.update(done_txn, fields=["category", "excluded"])
        batch.tag(Transaction.objects.filter(pk=done_txn.pk), tag)
    preview = alice.client.post(f"{RULES}/{rule['id']}/preview").json()
    assert preview["count"] == 20

    run = apply(alice, rule["id"], django_capture_on_commit_callbacks)
    assert (run["status"], run["matched"], run["changed"]) == ("completed", 21, 20)
    assert run["started_at"] and run["finished_at"] and run["error"] is None
    coffees = Transaction.objects.filter(family=alice.family, name__startswith="Coffee ").exclude(
        pk=done["id"]
    )
    assert coffees.count() == 20
    for txn in coffees:
        assert txn.category_id == category.id and txn.excluded
        assert list(txn.tags.all()) == [tag] and txn.rule_ids == [rule["id"]]
        assert sorted(txn.rule_changes[0]["set"]) == ["category", "excluded", "tags"]
    assert Transaction.objects.get(pk=done["id"]).rule_ids == []
    # balances follow: only the rent is left in them
    last = AccountBalance.objects.filter(account=account).order_by("date").last()
    assert str(last.balance) == "-500.0000"

    before = stored(alice)
    again = apply(alice, rule["id"], django_capture_on_commit_callbacks)
    assert (again["status"], again["matched"], again["changed"]) == ("completed", 21, 0)
    assert stored(alice) == before
    assert alice.client.post(f"{RULES}/{rule['id']}/preview").json() == {
        "count": 0,
        "transactions": [],
    }
    runs = alice.client.get("/api/v1/rule_runs", {"rule_id": rule["id"]}).json()
    assert [r["id"] for r in runs["rule_runs"]] == [again["id"], run["id"]]


def test_a_users_edit_is_never_changed_by_a_rule(alice, django_capture_on_commit_callbacks):
    account = alice.account()
    mine, rules = CategoryFactory(family=alice.family), CategoryFactory(family=alice.family)
    edited = create(alice, account, "Coffee with Bob")
    alice.client.patch(
        f"/api/v1/transactions/{edited['id']}",
        {"transaction": {"category_id": str(mine.id), "notes": "mine"}},
        format="json",
    )
    cleared = create(alice, account, "Coffee alone")
    alice.client.patch(
        f"/api/v1/transactions/{cleared['id']}",
        {"transaction": {"category_id": None}},  # "no category" is an edit too
        format="json",
    )
    untouched = create(alice, account, "Coffee beans")
    rule = coffee_rule(
        alice,
        {"type": "set_category", "value": str(rules.id)},
        {"type": "set_notes", "value": "by rule"},
    )
    run = apply(alice, rule["id"], django_capture_on_commit_callbacks)
    assert (run["matched"], run["changed"]) == (3, 2)  # the first: both fields edited
    by_id = {t.pk: t for t in Transaction.objects.filter(family=alice.family)}
    first, second, third = (by_id[Transaction._meta.pk.to_python(x["id"])] for x in
                            (edited, cleared, untouched))  # fmt: skip
    assert (first.category_id, first.notes) == (mine.id, "mine")
    assert (second.category_id, second.notes) == (None, "by rule")
    assert (third.category_id, third.notes) == (rules.id, "by rule")
    assert first.rule_changes == [] or first.rule_changes is None
    assert second.rule_changes == [{"rule": rule["id"], "set": ["notes"]}]
    # A later edit of a field a rule set is the household's: the next apply leaves it.
    alice.client.patch(
        f"/api/v1/transactions/{third.pk}", {"transaction": {"notes": "fixed"}}, format="json"
    )
    again = apply(alice, rule["id"], django_capture_on_commit_callbacks)
    assert again["changed"] == 0
    assert Transaction.objects.get(pk=third.pk).notes == "fixed"


def test_the_admin_bulk_categorise_is_an_edit_too(alice, django_capture_on_commit_callbacks):
    from finance.services.transactions_batch import transactions_categorise

    account = alice.account()
    mine, rules = CategoryFactory(family=alice.family), CategoryFactory(family=alice.family)
    txn = create(alice, account, "Coffee")
    transactions_categorise(transactions=Transaction.objects.filter(pk=txn["id"]), category=mine)
    rule = coffee_rule(alice, {"type": "set_category", "value": str(rules.id)})
    assert apply(alice, rule["id"], django_capture_on_commit_callbacks)["changed"] == 0
    assert Transaction.objects.get(pk=txn["id"]).category_id == mine.id


def test_a_run_of_the_same_rule_not_finished_is_answered_again(alice):
    rule = coffee_rule(alice, {"type": "set_notes", "value": "x"})
    first = alice.client.post(f"{RULES}/{rule['id']}/apply").json()  # queued, not run yet
    second = alice.client.post(f"{RULES}/{rule['id']}/apply").json()
    assert first["id"] == second["id"] and RuleRun.objects.count() == 1


def test_an_abandoned_run_gives_way_to_a_new_one(alice):
    import datetime as dt

    from django.utils import timezone

    rule = coffee_rule(alice, {"type": "set_notes", "value": "x"})
    first = alice.client.post(f"{RULES}/{rule['id']}/apply").json()  # its worker never came
    RuleRun.objects.filter(pk=first["id"]).update(updated_at=timezone.now() - dt.timedelta(hours=1))
    second = alice.client.post(f"{RULES}/{rule['id']}/apply").json()
    assert second["id"] != first["id"] and second["status"] == "pending"
    old = alice.client.get(f"/api/v1/rule_runs/{first['id']}").json()
    assert old["status"] == "failed" and "abandoned" in old["error"]


def test_a_run_whose_rule_is_gone_fails_and_says_why(alice):
    from finance.services.rules import rule_run_execute

    rule = coffee_rule(alice, {"type": "set_notes", "value": "x"})
    run = alice.client.post(f"{RULES}/{rule['id']}/apply").json()
    alice.client.delete(f"{RULES}/{rule['id']}")
    rule_run_execute(run_id=run["id"])
    body = alice.client.get(f"/api/v1/rule_runs/{run['id']}").json()
    assert body["status"] == "failed" and "deleted" in body["error"]
    assert body["rule_id"] is None
    # a finished run is not run again
    assert rule_run_execute(run_id=run["id"]).status == "failed"


def test_rule_runs_of_another_household_are_404(alice, charlie):
    rule = coffee_rule(alice, {"type": "set_notes", "value": "x"})
    run = alice.client.post(f"{RULES}/{rule['id']}/apply").json()
    assert_error(charlie.client.get(f"/api/v1/rule_runs/{run['id']}"), 404, "not_found")
    assert charlie.client.get("/api/v1/rule_runs").json()["rule_runs"] == []
    assert_error(alice.client.get("/api/v1/rule_runs/nope"), 404, "not_found")
    assert_error(alice.read_client.post(f"{RULES}/{rule['id']}/apply"), 403, "insufficient_scope")


def test_rule_runs_filter_by_rule_and_name_a_bad_id(alice):
    coffee = coffee_rule(alice, {"type": "set_notes", "value": "x"})
    rent = coffee_rule(alice, {"type": "set_notes", "value": "y"}, name="Rent")
    runs = {r["id"]: alice.client.post(f"{RULES}/{r['id']}/apply").json() for r in (coffee, rent)}
    listed = alice.client.get("/api/v1/rule_runs", {"rule_id": rent["id"]}).json()["rule_runs"]
    assert [r["id"] for r in listed] == [runs[rent["id"]]["id"]]
    every = alice.client.get("/api/v1/rule_runs").json()["rule_runs"]
    assert {r["id"] for r in every} == {run["id"] for run in runs.values()}
    body = assert_error(
        alice.client.get("/api/v1/rule_runs", {"rule_id": "nope"}), 422, "validation_failed"
    )
    assert any(e.startswith("rule_id:") for e in body["errors"]), body
