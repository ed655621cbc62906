"""A second household's user, in a real browser, sees none of the first household's data: not on
the dashboard, not in any admin list, not through the first household's record URLs."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib import admin
from django.urls import reverse

from finance.services.households import household_permissions_grant
from imports.models import Import
from tests.browser.conftest import login, shot
from tests.factories import (
    AccountFactory,
    CategoryFactory,
    MerchantFactory,
    TagFactory,
    TransactionFactory,
    UserFactory,
)
from tests.providers.factories import (
    ProviderAccountFactory,
    ProviderConnectionFactory,
    SyncFactory,
)

SECRET = "zqxsecret"  # in every name of the first household's records


def _alice_records(family) -> list:
    account = AccountFactory(family=family, name=f"Checking {SECRET}", balance=Decimal("1234.56"))
    category = CategoryFactory(family=family, name=f"Groceries {SECRET}")
    tag = TagFactory(family=family, name=f"tag-{SECRET}")
    merchant = MerchantFactory(family=family, name=f"Shop {SECRET}")
    tx = TransactionFactory(
        account=account, name=f"Coffee {SECRET}", category=category, merchant=merchant
    )
    tx.tags.add(tag)
    connection = ProviderConnectionFactory(family=family, name=f"Bank {SECRET}")
    provider_account = ProviderAccountFactory(
        connection=connection, name=f"Upstream {SECRET}", account=account
    )
    sync = SyncFactory(connection=connection, status="completed")
    data_import = Import.objects.create(
        family=family, account=account, original_filename=f"{SECRET}.csv"
    )
    return [account, category, tag, merchant, tx, connection, provider_account, sync, data_import]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_second_household_sees_none_of_the_first(page, live_server):
    alice = UserFactory(email="alice@example.com", family__name="Alice household")
    bob = UserFactory(email="bob@example.com", family__name="Bob household")
    for user in (alice, bob):
        household_permissions_grant(user=user)
    records = _alice_records(alice.family)

    login(page, live_server, alice.email)  # the first household does see its own data
    assert SECRET in page.content()
    shot(page, "isolation-alice-dashboard")
    page.context.clear_cookies()

    login(page, live_server, bob.email)
    assert "Bob household" in page.content() and SECRET not in page.content()
    shot(page, "isolation-bob-dashboard")

    changelists = [
        reverse(f"admin:{m._meta.app_label}_{m._meta.model_name}_changelist")
        for m in admin.site._registry
        if m._meta.app_label in {"finance", "imports", "providers", "trades"}
    ]
    assert len(changelists) >= 10
    shown = 0
    for url in changelists:
        response = page.goto(f"{live_server.url}{url}")
        assert response.status in (200, 403), url  # 403: households and users are staff's
        assert SECRET not in page.content(), url
        if response.status == 200:
            shown += 1
            shot(page, "isolation-bob-" + url.strip("/").replace("/", "-"))
    assert shown >= 10

    for record in records:
        meta = record._meta
        url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[record.pk])
        page.goto(f"{live_server.url}{url}")
        assert SECRET not in page.content(), url
        assert "Alice" not in page.content(), url

    account_list = reverse("admin:finance_account_changelist")
    page.goto(f"{live_server.url}{account_list}?q={SECRET}")
    assert page.locator("#result_list tbody tr").count() == 0
    page.goto(f"{live_server.url}{account_list}")
    assert page.locator("#result_list tbody tr").count() == 0  # Bob has no accounts
