"""In the browser: a rule made from a transaction, previewed, saved and applied to the others."""

from __future__ import annotations

from decimal import Decimal

import pytest

from finance.models import Rule, RuleRun, Transaction
from finance.services.households import household_permissions_grant
from tests.browser.conftest import login, shot
from tests.factories import (
    AccountFactory,
    CategoryFactory,
    TransactionFactory,
    UserFactory,
    ledger_derive,
)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_rule_made_from_a_transaction_and_applied(page, live_server):
    alice = UserFactory(email="alice@example.com", family__name="Alice household")
    household_permissions_grant(user=alice)
    account = AccountFactory(family=alice.family, name="Checking")
    coffee = CategoryFactory(family=alice.family, name="Coffee")
    model = TransactionFactory(
        account=account, name="CARD 4411 BLUE BOTTLE", amount=Decimal("4.5"), category=coffee
    )
    others = [
        TransactionFactory(account=account, name="CARD 4411 BLUE BOTTLE", amount=Decimal("5"))
        for _ in range(3)
    ]
    TransactionFactory(account=account, name="Rent", amount=Decimal("900"))
    ledger_derive(alice.family, {account.pk: None})

    login(page, live_server, alice.email)
    page.goto(f"{live_server.url}/admin/finance/transaction/")
    page.check(f"input[name=_selected_action][value='{model.pk}']")
    page.select_option("select[name=action]", "create_rule")
    page.click("button[name=index]")
    page.wait_for_load_state()
    assert page.input_value("#id_name") == "CARD 4411 BLUE BOTTLE"
    assert page.input_value("#id_conditions-0-field") == "name"
    assert page.input_value("#id_conditions-0-operator") == "contains"
    assert page.input_value("#id_actions-0-type") == "set_category"
    assert page.input_value("#id_actions-0-value") == "Coffee"
    page.fill("#id_conditions-0-value", "blue bottle")

    page.click("#rule-preview-button")
    page.wait_for_load_state()
    shot(page, "rule-preview")
    assert "Preview: 3 existing transactions would change" in page.content()
    assert not Rule.objects.exists()

    page.click("#rule-apply-button")
    page.wait_for_load_state()
    shot(page, "rule-saved-and-applied")
    assert "is being applied" in page.content()
    rule = Rule.objects.get(family=alice.family)
    run = RuleRun.objects.get(rule=rule)
    assert (run.status, run.matched, run.changed) == ("completed", 4, 3)
    for txn in others:
        txn.refresh_from_db()
        assert txn.category_id == coffee.pk and txn.rule_ids == [str(rule.pk)]
    assert Transaction.objects.get(name="Rent").category_id is None

    page.goto(f"{live_server.url}/admin/finance/transaction/{others[0].pk}/change/")
    shot(page, "transaction-rules-applied")
    assert "set category" in page.inner_text(".field-rules_applied")
