"""The trades admin pages: each household sees its own trades, holdings and manual
securities plus shared securities, never another household's; shared ones are read-only."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.test import Client

from finance.services.households import household_permissions_grant
from tests.factories import AccountFactory
from trades.models import Holding, Security, SecurityPrice, Trade
from trades.services import trade_create


def logged_in(household) -> Client:
    household_permissions_grant(user=household.user)
    client = Client()
    client.force_login(household.user)
    return client


def seed(household, ticker: str) -> tuple[Trade, Security]:
    account = AccountFactory(
        family=household.family, account_type="investment", name=f"{ticker} brokerage"
    )
    entry = trade_create(
        family=household.family,
        account_id=account.id,
        date=dt.date(2024, 5, 2),
        manual_ticker=ticker,
        qty=Decimal(3),
        price=Decimal(10),
    )
    return entry.record, Security.objects.get(family=household.family)


@pytest.mark.django_db
def test_each_household_sees_only_its_own_rows(alice, charlie):
    shared = Security.objects.create(ticker="VTI", name="Vanguard")
    a_trade, a_sec = seed(alice, "ALICEFUND")
    c_trade, c_sec = seed(charlie, "CHARLIEFUND")
    a_holding = Holding.objects.get(account=a_trade.account)
    c_holding = Holding.objects.get(account=c_trade.account)
    client = logged_in(alice)

    page = client.get("/admin/trades/security/").content.decode()
    assert "ALICEFUND" in page and "VTI" in page and "CHARLIEFUND" not in page
    page = client.get("/admin/trades/trade/").content.decode()
    assert "ALICEFUND" in page and "CHARLIEFUND" not in page
    page = client.get("/admin/trades/holding/").content.decode()
    assert "ALICEFUND" in page and "CHARLIEFUND" not in page

    for url in (
        f"/admin/trades/security/{c_sec.pk}/change/",
        f"/admin/trades/trade/{c_trade.pk}/change/",
        f"/admin/trades/trade/{c_trade.pk}/delete/",
        f"/admin/trades/holding/{c_holding.pk}/change/",
    ):
        assert client.get(url).status_code == 302, url  # "does not exist" redirect
    assert client.get(f"/admin/trades/trade/{a_trade.pk}/change/").status_code == 200
    assert client.get(f"/admin/trades/holding/{a_holding.pk}/change/").status_code == 200

    # the trade form offers own investment and crypto accounts only
    checking = alice.account(name="Everyday checking")
    form = client.get(f"/admin/trades/trade/{a_trade.pk}/change/").content.decode()
    assert str(checking.pk) not in form
    assert str(a_sec.pk) in form and str(c_sec.pk) not in form
    assert str(a_trade.account_id) in form and str(c_trade.account_id) not in form

    # autocomplete of securities: shared and own, never another household's
    r = client.get(
        "/admin/autocomplete/",
        {"app_label": "trades", "model_name": "trade", "field_name": "security", "term": ""},
    )
    assert r.status_code == 200
    ids = {row["id"] for row in r.json()["results"]}
    assert ids == {str(shared.pk), str(a_sec.pk)}


@pytest.mark.django_db
def test_shared_securities_are_read_only_for_households(alice):
    shared = Security.objects.create(ticker="VTI", name="Vanguard")
    client = logged_in(alice)
    r = client.post(
        f"/admin/trades/security/{shared.pk}/change/",
        {"ticker": "HACKED", "name": "x", "exchange_mic": "", "currency": ""},
    )
    assert r.status_code in (200, 403)
    shared.refresh_from_db()
    assert shared.ticker == "VTI"
    # a security a household adds is its own manual security
    r = client.post(
        "/admin/trades/security/add/",
        {"ticker": "MYFUND", "name": "My fund", "exchange_mic": "", "currency": "USD"},
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    added = Security.objects.get(ticker="MYFUND")
    assert added.family == alice.family and added.manual is True


@pytest.mark.django_db
def test_deleting_a_trade_in_the_admin_updates_holdings(alice):
    trade, _ = seed(alice, "ALICEFUND")
    client = logged_in(alice)
    r = client.post(f"/admin/trades/trade/{trade.pk}/delete/", {"post": "yes"})
    assert r.status_code == 302
    assert not Trade.objects.exists() and not Holding.objects.exists()


@pytest.mark.django_db
def test_price_points_are_listed_read_only_and_follow_admin_trade_edits(alice, charlie):
    trade, _ = seed(alice, "ALICEFUND")
    seed(charlie, "CHARLIEFUND")
    client = logged_in(alice)
    page = client.get("/admin/trades/securityprice/").content.decode()
    assert "ALICEFUND" in page and "CHARLIEFUND" not in page
    point = SecurityPrice.objects.get(family=alice.family)
    assert client.get(f"/admin/trades/securityprice/{point.pk}/delete/").status_code == 403
    assert client.get("/admin/trades/securityprice/add/").status_code == 403

    # an edit in the admin moves the trade's price point and the account's value
    form = {
        "account": str(trade.account_id),
        "security": str(trade.security_id),
        "kind": "buy",
        "date": "2024-05-04",
        "qty": "3",
        "price": "12",
        "amount": "30",
        "currency": "USD",
        "name": trade.name,
        "investment_activity_label": "Buy",
    }
    r = client.post(f"/admin/trades/trade/{trade.pk}/change/", form)
    assert r.status_code == 302, r.content.decode()[:2000]
    point = SecurityPrice.objects.get(family=alice.family)
    assert (point.date, point.price) == (dt.date(2024, 5, 4), Decimal(12))
    trade.account.refresh_from_db()
    # cash -30, 3 units at 12
    assert (trade.account.balance, trade.account.holdings_value) == (Decimal(6), Decimal(36))

    # a buy in another currency than its account's is refused with the reason
    r = client.post(f"/admin/trades/trade/{trade.pk}/change/", {**form, "currency": "EUR"})
    assert "must be the account&#x27;s currency (USD)" in client.get(r["Location"]).content.decode()
    assert Trade.objects.get(pk=trade.pk).currency == "USD"
