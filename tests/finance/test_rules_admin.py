"""Rules in the admin: the household's rules page, the editor's rows, a preview before saving,
"create rule from this transaction", "apply to existing", and which rule set what on a
transaction's page; always scoped to the household."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from finance.models import Rule, RuleRun, Transaction, User
from finance.services.households import household_permissions_grant
from finance.services.rules import rule_apply_request, rule_create
from tests.factories import (
    CategoryFactory,
    MerchantFactory,
    TagFactory,
    TransactionFactory,
    ledger_derive,
)

pytestmark = pytest.mark.django_db
RULES = reverse("admin:finance_rule_changelist")
ADD = reverse("admin:finance_rule_add")
TRANSACTIONS = reverse("admin:finance_transaction_changelist")


def client_for(household) -> Client:
    household_permissions_grant(user=household.user)
    client = Client()
    client.force_login(household.user)
    return client


def rows(prefix: str, items: list[dict[str, str]], extra: int = 2) -> dict[str, str]:
    """A formset's POST data: the rows given, then blank ones."""
    data = {
        f"{prefix}-TOTAL_FORMS": str(len(items) + extra),
        f"{prefix}-INITIAL_FORMS": "0",
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }
    for i, item in enumerate(items):
        data.update({f"{prefix}-{i}-{k}": v for k, v in item.items()})
    return data


def editor_post(name: str, conditions: list[dict], actions: list[dict], **extra) -> dict:
    return {
        "name": name,
        "active": "on",
        "match": "all",
        **rows("conditions", conditions),
        **rows("actions", actions),
        **extra,
    }


@pytest.fixture
def coffees(alice):
    account = alice.account(name="Checking")
    for day in range(1, 4):
        TransactionFactory(account=account, name=f"BLUE BOTTLE {day}", amount=Decimal("4"))
    TransactionFactory(account=account, name="Rent", amount=Decimal("900"))
    ledger_derive(alice.family, {account.pk: None})
    return account


def test_rules_page_lists_the_households_rules_only(alice, charlie):
    mine = rule_create(
        family=alice.family,
        name="Mine",
        conditions=[{"field": "name", "operator": "contains", "value": "x"}],
        actions=[{"type": "set_notes", "value": "y"}],
    )
    theirs = rule_create(family=charlie.family, **_plain("Theirs"))
    client = client_for(alice)
    page = client.get(RULES)
    assert page.status_code == 200
    text = page.content.decode()
    assert "Mine" in text and "Theirs" not in text and "if name contains: set_notes" in text
    assert client.get(reverse("admin:finance_rule_change", args=[mine.pk])).status_code == 200
    assert client.get(reverse("admin:finance_rule_change", args=[theirs.pk])).status_code == 404
    post = client.post(reverse("admin:finance_rule_change", args=[theirs.pk]), _form("Hijack"))
    assert post.status_code == 404
    assert Rule.objects.get(pk=theirs.pk).name == "Theirs"
    assert client.get(reverse("admin:finance_rule_change", args=["nope"])).status_code == 404


def _plain(name: str) -> dict:
    return {
        "name": name,
        "conditions": [{"field": "name", "operator": "contains", "value": "x"}],
        "actions": [{"type": "set_notes", "value": "y"}],
    }


def _form(name: str) -> dict:
    return editor_post(
        name,
        [{"field": "name", "operator": "contains", "value": "x"}],
        [{"type": "set_notes", "value": "y"}],
    )


def test_the_editor_saves_rows_with_names_resolved(alice):
    coffee = CategoryFactory(family=alice.family, name="Coffee")
    caffeine = TagFactory(family=alice.family, name="caffeine")
    account = alice.account(name="Checking")
    client = client_for(alice)
    page = client.get(ADD)
    assert page.status_code == 200
    assert 'name="conditions-0-field"' in page.content.decode()
    response = client.post(
        ADD,
        editor_post(
            "Coffee",
            [
                {"field": "name", "operator": "contains", "value": "blue bottle"},
                {"field": "account_id", "operator": "in", "value": "checking"},
                {"field": "amount", "operator": "between", "value": "1, 20"},
                {"field": "category_id", "operator": "is_empty", "value": ""},
            ],
            [
                {"type": "set_category", "value": "coffee"},
                {"type": "add_tags", "value": "Caffeine"},
                {"type": "exclude", "value": "no"},
            ],
        ),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    rule = Rule.objects.get(family=alice.family)
    assert rule.conditions == [
        {"field": "name", "operator": "contains", "value": "blue bottle"},
        {"field": "account_id", "operator": "in", "value": [str(account.pk)]},
        {"field": "amount", "operator": "between", "value": ["1", "20"]},
        {"field": "category_id", "operator": "is_empty", "value": True},
    ]
    assert rule.actions == [
        {"type": "set_category", "value": str(coffee.pk)},
        {"type": "add_tags", "value": [str(caffeine.pk)]},
        {"type": "exclude", "value": False},
    ]
    # the change page shows the rows by name again
    text = client.get(reverse("admin:finance_rule_change", args=[rule.pk])).content.decode()
    assert 'value="Checking"' in text and 'value="Coffee"' in text and 'value="caffeine"' in text


def test_a_bad_row_is_shown_on_its_row_and_nothing_is_saved(alice, charlie):
    theirs = CategoryFactory(family=charlie.family, name="Theirs")
    client = client_for(alice)
    response = client.post(
        ADD,
        editor_post(
            "Bad",
            [{"field": "name", "operator": "matches", "value": "(unclosed"}],
            [{"type": "set_category", "value": str(theirs.pk)}],
        ),
    )
    assert response.status_code == 200
    text = response.content.decode()
    assert "is not a valid regular expression" in text
    assert "does not exist in this household" in text
    assert not Rule.objects.exists()


def test_preview_before_save_changes_nothing(alice, coffees):
    coffee = CategoryFactory(family=alice.family, name="Coffee")
    client = client_for(alice)
    before = list(Transaction.objects.values_list("id", "category_id", "updated_at"))
    response = client.post(
        ADD,
        editor_post(
            "Coffee",
            [{"field": "name", "operator": "starts_with", "value": "blue bottle"}],
            [{"type": "set_category", "value": "Coffee"}],
            _preview="Preview",
        ),
    )
    assert response.status_code == 200
    text = response.content.decode()
    assert "Preview: 3 existing transactions would change" in text
    assert text.count("BLUE BOTTLE") == 3 and "Rent" not in re.sub(r"<option[^>]*>", "", text)
    assert not Rule.objects.exists()
    assert list(Transaction.objects.values_list("id", "category_id", "updated_at")) == before
    assert coffee  # named by the form's row


def test_create_rule_from_a_transaction_then_save_and_apply(
    alice, coffees, django_capture_on_commit_callbacks
):
    coffee = CategoryFactory(family=alice.family, name="Coffee")
    roastery = MerchantFactory(family=alice.family, name="Blue Bottle")
    model = Transaction.objects.filter(name="BLUE BOTTLE 1").get()
    from finance.ledger import ledger_batch

    with ledger_batch(family=alice.family) as batch:
        model.category, model.merchant = coffee, roastery
        batch.update(model, fields=["category", "merchant"])
    client = client_for(alice)
    response = client.post(
        TRANSACTIONS, {"action": "create_rule", "_selected_action": [str(model.pk)]}
    )
    assert response.status_code == 302
    assert response["Location"] == f"{ADD}?from_transaction={model.pk}"
    page = client.get(response["Location"]).content.decode()
    assert 'name="name" value="Blue Bottle"' in page
    assert re.search(r'<option value="merchant" selected>', page)
    assert re.search(r'<option value="equals" selected>', page)
    assert re.search(r'<option value="set_category" selected>', page)
    assert 'name="actions-0-value" value="Coffee"' in page

    # a merchant-less one is matched by its name
    plain = Transaction.objects.get(name="BLUE BOTTLE 2")
    page = client.get(ADD, {"from_transaction": plain.pk}).content.decode()
    assert 'name="conditions-0-value" value="BLUE BOTTLE 2"' in page
    assert re.search(r'<option value="contains" selected>', page)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            ADD,
            editor_post(
                "Coffee",
                [{"field": "name", "operator": "contains", "value": "blue bottle"}],
                [{"type": "set_category", "value": "Coffee"}],
                _apply="Save and apply to existing",
            ),
        )
    rule = Rule.objects.get(family=alice.family)
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:finance_rule_change", args=[rule.pk])
    run = RuleRun.objects.get(rule=rule)
    assert (run.status, run.matched, run.changed) == ("completed", 3, 2)
    assert Transaction.objects.filter(category=coffee).count() == 3

    # the transaction's page says which rule set what
    changed = Transaction.objects.get(name="BLUE BOTTLE 2")
    page = client.get(reverse("admin:finance_transaction_change", args=[changed.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert re.search(r"<li><a href=\"[^\"]+\">Coffee</a> set category</li>", text)
    assert 'name="rule_changes"' not in text and 'name="edited_fields"' not in text
    untouched = client.get(reverse("admin:finance_transaction_change", args=[model.pk]))
    assert "No rule changed this transaction." in untouched.content.decode()


def test_apply_action_on_the_rules_list(alice, coffees, django_capture_on_commit_callbacks):
    rule = rule_create(
        family=alice.family,
        name="Notes",
        conditions=[{"field": "name", "operator": "contains", "value": "rent"}],
        actions=[{"type": "set_notes", "value": "monthly"}],
    )
    client = client_for(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            RULES, {"action": "apply_to_existing", "_selected_action": [str(rule.pk)]}
        )
    assert response.status_code == 302
    assert Transaction.objects.get(name="Rent").notes == "monthly"
    runs = client.get(reverse("admin:finance_rulerun_changelist"))
    assert runs.status_code == 200 and "completed" in runs.content.decode()


def test_staff_rule_runs_list_does_not_query_a_row(alice, charlie):
    """Staff see each run's household: read with the runs, not one query a row."""
    staff = Client()
    staff.force_login(User.objects.create_superuser(email="root@example.com", password="x"))
    runs = reverse("admin:finance_rulerun_changelist")

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert staff.get(runs).status_code == 200
        return len(captured)

    def apply(household) -> None:
        rule = rule_create(
            family=household.family,
            name="Notes",
            conditions=[{"field": "name", "operator": "contains", "value": "rent"}],
            actions=[{"type": "set_notes", "value": "monthly"}],
        )
        rule_apply_request(rule=rule)

    apply(alice)
    one = queries()
    for household in (alice, charlie, charlie):
        apply(household)
    assert queries() == one
