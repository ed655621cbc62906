from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.test import Client

from finance.models import AccountBalance
from finance.selectors.dashboard import family_today
from finance.services.households import household_permissions_grant
from tests.factories import CategoryFactory, TransactionFactory


@pytest.mark.django_db
def test_dashboard_shows_net_worth_spending_and_accounts(alice, charlie):
    today = family_today(alice.family)
    checking = alice.account(name="Everyday checking")
    card = alice.account(name="Travel card", account_type="credit_card")
    for offset, balance in ((10, "900"), (2, "1200")):
        AccountBalance.objects.create(
            account=checking,
            date=today - dt.timedelta(days=offset),
            balance=Decimal(balance),
            currency="USD",
        )
    AccountBalance.objects.create(
        account=card, date=today - dt.timedelta(days=5), balance=Decimal("200"), currency="USD"
    )
    groceries = CategoryFactory(family=alice.family, name="Groceries")
    TransactionFactory(account=checking, date=today, amount=Decimal("54.20"), category=groceries)
    charlie.account(name="Charlie secret account")

    household_permissions_grant(user=alice.user)
    browser = Client()
    browser.force_login(alice.user)
    page = browser.get("/admin/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "Net worth" in html and "<svg" in html
    assert "1,000.00 USD" in html  # 1200 assets - 200 card today
    assert "Groceries" in html and "54.20" in html
    assert "Everyday checking" in html and "Travel card" in html
    assert "Charlie secret account" not in html
    assert "http://" not in html.split("<body")[1].replace("http://www.w3.org", "")
