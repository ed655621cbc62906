"""The account page in a real browser: Sync now brings new transactions with the Pending badge
without a reload; once the bank posts them, Sync now again clears the badge."""

from __future__ import annotations

import pytest
from django.urls import reverse

from finance.models import Account
from finance.services.households import household_permissions_grant
from tests.browser.conftest import login, shot
from tests.factories import UserFactory
from tests.providers.conftest import connect, day, lunchflow, run_sync  # noqa: F401 (fixture)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_sync_now_shows_pending_then_posted(page, live_server, lunchflow):  # noqa: F811
    user = UserFactory(email="alice@example.com", family__name="Alice household")
    household_permissions_grant(user=user)
    scenario = lunchflow.scenario
    scenario.add_account("a1", "Everyday account", "EUR", "2000.00")
    scenario.add_transaction("a1", "t1", day(5), "-120.00", "Rent share")

    class Household:
        family = user.family

    run_sync(connect(Household))
    account = Account.objects.get(family=user.family)

    login(page, live_server, user.email)
    page.goto(f"{live_server.url}{reverse('admin:finance_account_change', args=[account.pk])}")
    assert page.locator("#balance-chart .pf-chart-wide svg").count() == 1
    assert page.locator("#sync-status").inner_text() == "Completed"
    assert page.locator(".pf-badge-pending").count() == 0
    shot(page, "account-page-before-sync")

    scenario.add_transaction("a1", "t2", day(0), "-4.50", "Corner bakery", pending=True)
    page.click("#sync-now")
    page.wait_for_selector("#sync-progress:has-text('Sync completed')")
    row = page.locator("tr.pf-tx", has_text="Corner bakery")
    assert row.locator(".pf-badge-pending").inner_text() == "Pending"
    assert "1 new" in page.locator("#sync-progress").inner_text()
    shot(page, "account-page-pending")

    scenario.transactions["a1"][-1]["isPending"] = False  # the bank posts it
    page.click("#sync-now")
    page.wait_for_selector("#sync-progress:has-text('1 updated')")
    row = page.locator("tr.pf-tx", has_text="Corner bakery")
    assert row.count() == 1 and row.locator(".pf-badge-pending").count() == 0
    shot(page, "account-page-posted")

    page.click("text=all of them")
    page.wait_for_load_state()
    assert page.locator("#result_list tbody tr").count() == 2
    assert "Corner bakery" in page.locator("#result_list").inner_text()
    shot(page, "transactions-list-for-account")
