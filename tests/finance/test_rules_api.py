"""Rules over HTTP: create, read, list, update, delete, and the check of every field, operator
and action (decisions.md "Rules")."""

from __future__ import annotations

import pytest

from finance.models import Rule
from finance.rules.definitions import NOT_IN_HOUSEHOLD
from tests.conftest import assert_error
from tests.factories import CategoryFactory, MerchantFactory, TagFactory

URL = "/api/v1/rules"
pytestmark = pytest.mark.django_db


def coffee(category, **fields):
    return {
        "rule": {
            "name": "Coffee",
            "conditions": [{"field": "name", "operator": "contains", "value": "blue bottle"}],
            "actions": [{"type": "set_category", "value": str(category.id)}],
            **fields,
        }
    }


def errors_of(response) -> list[str]:
    return assert_error(response, 422, "validation_failed")["errors"]


def test_create_read_list_update_delete(alice):
    category = CategoryFactory(family=alice.family)
    r = alice.client.post(URL, coffee(category), format="json")
    assert r.status_code == 201, r.content
    rule = r.json()
    assert rule["name"] == "Coffee" and rule["active"] is True and rule["match"] == "all"
    assert rule["position"] == 0
    assert rule["conditions"] == [{"field": "name", "operator": "contains", "value": "blue bottle"}]
    assert rule["actions"] == [{"type": "set_category", "value": str(category.id)}]
    assert rule["created_at"].endswith("Z") and rule["updated_at"].endswith("Z")

    # A second rule without a position goes after the first.
    second = alice.client.post(URL, coffee(category, name="Second"), format="json").json()
    assert second["position"] == 1
    first = alice.client.post(URL, coffee(category, name="First", position=0), format="json")
    listed = alice.client.get(URL).json()
    assert [r["name"] for r in listed["rules"]] == ["Coffee", "First", "Second"]
    assert listed["pagination"] == {"page": 1, "per_page": 25, "total_count": 3, "total_pages": 1}
    assert alice.client.get(f"{URL}/{rule['id']}").json() == rule

    r = alice.client.patch(
        f"{URL}/{rule['id']}",
        {"rule": {"active": False, "match": "any", "position": 5}},
        format="json",
    )
    assert r.status_code == 200, r.content
    assert (r.json()["active"], r.json()["match"], r.json()["position"]) == (False, "any", 5)
    assert r.json()["conditions"] == rule["conditions"]  # what was not sent stays
    r = alice.client.put(f"{URL}/{rule['id']}", {"rule": {"name": "Cafe"}}, format="json")
    assert r.status_code == 200 and r.json()["name"] == "Cafe"
    assert [r["name"] for r in alice.client.get(URL, {"active": "true"}).json()["rules"]] == [
        "First",
        "Second",
    ]

    r = alice.client.delete(f"{URL}/{first.json()['id']}")
    assert r.status_code == 200 and r.json() == {"message": "Rule deleted"}
    assert_error(alice.client.get(f"{URL}/{first.json()['id']}"), 404, "not_found")


def test_values_are_normalised(alice):
    account = alice.account()
    tag = TagFactory(family=alice.family)
    body = {
        "rule": {
            "name": "  Big rent  ",
            "conditions": [
                {"field": "amount", "operator": "between", "value": [1000, "2000.5"]},
                {"field": "date", "operator": "gte", "value": "2024-01-01"},
                {"field": "account_id", "operator": "in", "value": [str(account.id).upper()]},
                {"field": "category_id", "operator": "is_empty"},
                {"field": "notes", "operator": "matches", "value": r"^rent\s+\d+"},
            ],
            "actions": [
                {"type": "add_tags", "value": [str(tag.id)]},
                {"type": "set_merchant", "value": " Landlord "},
                {"type": "set_notes", "value": ""},
                {"type": "exclude", "value": True},
            ],
        }
    }
    r = alice.client.post(URL, body, format="json")
    assert r.status_code == 201, r.content
    rule = r.json()
    assert rule["name"] == "Big rent"
    assert [c["value"] for c in rule["conditions"]] == [
        ["1000", "2000.5"],
        "2024-01-01",
        [str(account.id)],
        True,
        r"^rent\s+\d+",
    ]
    assert [a["value"] for a in rule["actions"]] == [[str(tag.id)], "Landlord", None, True]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"name": ""}, "name:"),
        ({"name": 5}, "name:"),
        ({"active": "yes"}, "active:"),
        ({"match": "some"}, "match:"),
        ({"position": -1}, "position:"),
        ({"position": "1"}, "position:"),
        ({"colour": "red"}, "colour: unknown field"),
        ({"conditions": []}, "conditions:"),
        ({"conditions": {"field": "name"}}, "conditions: must be a list"),
        ({"actions": []}, "actions:"),
        ({"conditions": ["x"]}, "conditions[0]: must be an object"),
        ({"conditions": [{"field": "payee", "operator": "equals", "value": "x"}]},
         "conditions[0].field: one of name"),
        ({"conditions": [{"field": "name", "operator": "gt", "value": "x"}]},
         "conditions[0].operator: one of contains"),
        ({"conditions": [{"field": "amount", "operator": "contains", "value": "1"}]},
         "conditions[0].operator:"),
        ({"conditions": [{"field": "account_id", "operator": "gt", "value": "1"}]},
         "conditions[0].operator:"),
        ({"conditions": [{"field": "name", "operator": "contains"}]},
         "conditions[0].value: This field is required."),
        ({"conditions": [{"field": "name", "operator": "contains", "value": 5}]},
         "conditions[0].value:"),
        ({"conditions": [{"field": "name", "operator": "contains", "value": "  "}]},
         "conditions[0].value:"),
        ({"conditions": [{"field": "name", "operator": "matches", "value": "(unclosed"}]},
         "conditions[0].value: is not a valid regular expression"),
        ({"conditions": [{"field": "amount", "operator": "gt", "value": "ten"}]},
         "conditions[0].value: must be a number"),
        ({"conditions": [{"field": "amount", "operator": "gt", "value": True}]},
         "conditions[0].value: must be a number"),
        ({"conditions": [{"field": "amount", "operator": "between", "value": [5, 1]}]},
         "conditions[0].value:"),
        ({"conditions": [{"field": "amount", "operator": "between", "value": 5}]},
         "conditions[0].value:"),
        ({"conditions": [{"field": "date", "operator": "lt", "value": "2024-13-01"}]},
         "conditions[0].value: must be a date"),
        ({"conditions": [{"field": "date", "operator": "lt", "value": "01/02/2024"}]},
         "conditions[0].value: must be a date"),
        ({"conditions": [{"field": "category_id", "operator": "equals", "value": "nope"}]},
         "conditions[0].value: must be a uuid"),
        ({"conditions": [{"field": "category_id", "operator": "in", "value": []}]},
         "conditions[0].value:"),
        ({"conditions": [{"field": "notes", "operator": "is_empty", "value": "yes"}]},
         "conditions[0].value:"),
        ({"conditions": [{"field": "name", "operator": "equals", "value": "x", "x": 1}]},
         "conditions[0].x: unknown field"),
        ({"actions": [{"type": "delete"}]}, "actions[0].type: one of set_category"),
        ({"actions": [{"type": {"a": 1}}]}, "actions[0].type: one of set_category"),
        ({"conditions": [{"field": ["name"], "operator": "equals", "value": "x"}]},
         "conditions[0].field:"),
        ({"conditions": [{"field": "name", "operator": {}, "value": "x"}]},
         "conditions[0].operator:"),
        ({"match": ["all"]}, "match:"),
        ({"actions": [{"type": "set_category", "value": "x"}]},
         "actions[0].value: must be a uuid"),
        ({"actions": [{"type": "set_merchant", "value": ""}]}, "actions[0].value:"),
        ({"actions": [{"type": "add_tags", "value": "x"}]}, "actions[0].value:"),
        ({"actions": [{"type": "remove_tags", "value": ["x"]}]},
         "actions[0].value[0]: must be a uuid"),
        ({"actions": [{"type": "set_name", "value": ""}]}, "actions[0].value:"),
        ({"actions": [{"type": "set_notes", "value": 3}]}, "actions[0].value:"),
        ({"actions": [{"type": "exclude", "value": "true"}]},
         "actions[0].value: must be true or false"),
        ({"actions": [{"type": "set_name", "value": "a"}, {"type": "set_name", "value": "b"}]},
         "actions[1].type: set_name appears more than once"),
    ],
)  # fmt: skip
def test_every_field_operator_and_action_is_checked(alice, change, named):
    category = CategoryFactory(family=alice.family)
    errors = errors_of(alice.client.post(URL, coffee(category, **change), format="json"))
    assert any(e.startswith(named) for e in errors), errors
    assert not Rule.objects.exists()


def test_missing_fields_and_root_key(alice):
    assert "rule: This field is required." in errors_of(alice.client.post(URL, {}, format="json"))
    errors = errors_of(alice.client.post(URL, {"rule": []}, format="json"))
    assert errors[0].startswith("rule:")
    errors = errors_of(alice.client.post(URL, {"rule": {}}, format="json"))
    assert errors == [
        "name: This field is required.",
        "conditions: This field is required.",
        "actions: This field is required.",
    ]


def test_every_problem_is_named_at_once(alice):
    body = {
        "rule": {
            "name": "x",
            "conditions": [
                {"field": "name", "operator": "matches", "value": "[a-"},
                {"field": "amount", "operator": "nearly", "value": 1},
            ],
            "actions": [{"type": "set_category", "value": "not-an-id"}],
        }
    }
    errors = errors_of(alice.client.post(URL, body, format="json"))
    assert [e.split(":")[0] for e in errors] == [
        "conditions[0].value",
        "conditions[1].operator",
        "actions[0].value",
    ]


def test_another_households_records_are_named(alice, charlie):
    theirs = CategoryFactory(family=charlie.family)
    their_tag = TagFactory(family=charlie.family)
    their_merchant = MerchantFactory(family=charlie.family)
    their_account = charlie.account()
    mine = CategoryFactory(family=alice.family)
    body = coffee(
        theirs,
        conditions=[
            {"field": "account_id", "operator": "equals", "value": str(their_account.id)},
            {"field": "category_id", "operator": "in", "value": [str(mine.id), str(theirs.id)]},
        ],
        actions=[
            {"type": "set_category", "value": str(theirs.id)},
            {"type": "add_tags", "value": [str(their_tag.id)]},
            {"type": "set_merchant", "value": str(their_merchant.id)},
        ],
    )
    errors = errors_of(alice.client.post(URL, body, format="json"))
    assert errors == [
        f"conditions[0].value: {their_account.id} {NOT_IN_HOUSEHOLD}",
        f"conditions[1].value: {theirs.id} {NOT_IN_HOUSEHOLD}",
        f"actions[0].value: {theirs.id} {NOT_IN_HOUSEHOLD}",
        f"actions[1].value: {their_tag.id} {NOT_IN_HOUSEHOLD}",
        f"actions[2].value: {their_merchant.id} {NOT_IN_HOUSEHOLD}",
    ]


def test_update_is_checked_too_and_changes_nothing_when_bad(alice):
    category = CategoryFactory(family=alice.family)
    rule = alice.client.post(URL, coffee(category), format="json").json()
    r = alice.client.patch(
        f"{URL}/{rule['id']}",
        {"rule": {"name": "New", "conditions": [{"field": "name", "operator": "matches"}]}},
        format="json",
    )
    assert errors_of(r) == ["conditions[0].value: This field is required."]
    assert alice.client.get(f"{URL}/{rule['id']}").json()["name"] == "Coffee"


def test_another_households_rule_is_404_and_a_read_key_cannot_write(alice, charlie):
    category = CategoryFactory(family=alice.family)
    rule = alice.client.post(URL, coffee(category), format="json").json()
    for method in ("get", "patch", "put", "delete"):
        r = getattr(charlie.client, method)(f"{URL}/{rule['id']}", {"rule": {}}, format="json")
        assert_error(r, 404, "not_found")
    for action in ("preview", "apply"):
        assert_error(charlie.client.post(f"{URL}/{rule['id']}/{action}"), 404, "not_found")
    assert charlie.client.get(URL).json()["rules"] == []
    assert_error(alice.client.get(f"{URL}/not-a-uuid"), 404, "not_found")
    r = alice.read_client.post(URL, coffee(category), format="json")
    assert_error(r, 403, "insufficient_scope")
    assert alice.read_client.get(URL).status_code == 200
