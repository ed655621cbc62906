"""The admin dashboard counts every account in the household's currency, with the original
amount beside a foreign account's, and names what it could not convert."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.test import Client

from finance.models import ExchangeRate
from finance.selectors.dashboard import family_today
from finance.services.households import household_permissions_grant
from tests.factories import CategoryFactory
from tests.finance.fx_helpers import create_account, create_transaction


@pytest.mark.django_db
def test_dashboard_converts_foreign_accounts_and_spending(alice):
    today = family_today(alice.family)
    for n in range(0, 200, 5):
        ExchangeRate.objects.create(
            date=today - dt.timedelta(days=n),
            from_currency="EUR",
            to_currency="USD",
            rate=Decimal("1.2"),
            source="ecb",
        )
    checking = create_account(alice, "Everyday checking", "USD")
    euro = create_account(alice, "Girokonto", "EUR")
    yen = create_account(alice, "Yokin", "JPY")
    food = CategoryFactory(family=alice.family, name="Food")
    create_transaction(alice, checking, today, "-1000")
    create_transaction(alice, euro, today, "-2000", currency="EUR")
    create_transaction(alice, euro, today, "50", currency="EUR", category_id=str(food.pk))
    create_transaction(alice, yen, today, "-10000", currency="JPY")
    create_transaction(alice, yen, today, "700", currency="JPY", category_id=str(food.pk))

    household_permissions_grant(user=alice.user)
    browser = Client()
    browser.force_login(alice.user)
    html = browser.get("/admin/").content.decode()
    # 1,000 + EUR 1,950 x 1.2 = 3,340; the yen are not counted, and said so
    assert ">3,340.00 USD<" in html  # the net worth, in the one money format
    assert "2,340.00 USD" in html and "1,950.00 EUR" in html
    assert "9,300 JPY" in html and "no USD rate" in html
    assert "Not counted: JPY accounts" in html and "Not counted: JPY spending" in html
    assert "Food" in html and "60.00" in html  # EUR 50 at 1.2, the yen left out
    # the dashboard's figure is the API's (both from selectors/net_worth.py)
    api = alice.client.get("/api/v1/net_worth").json()
    total = Decimal(api["series"][-1]["net_worth"])
    assert f'id="net-worth-total">{total:,.2f} USD<' in html
