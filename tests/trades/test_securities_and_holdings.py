"""Securities (shared reference data vs a household's manual ones) and holdings, including
the provider replacement the sync engine calls."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from providers.types import UpstreamHolding
from tests.conftest import assert_error
from tests.factories import AccountFactory
from trades.models import Holding, Security
from trades.services import holdings_recompute_from_trades, holdings_replace_from_provider

URL = "/api/v1/securities"


def investment(household, **kwargs):
    return AccountFactory(family=household.family, account_type="investment", **kwargs)


@pytest.mark.django_db
class TestSecurities:
    def test_shared_and_own_manual_visible_never_another_households(self, alice, charlie):
        shared = Security.objects.create(ticker="VTI", name="Vanguard Total Stock Market")
        mine = Security.objects.create(family=alice.family, ticker="HOUSE", manual=True)
        theirs = Security.objects.create(family=charlie.family, ticker="SECRET", manual=True)
        r = alice.client.get(URL)
        assert r.status_code == 200
        tickers = [s["ticker"] for s in r.json()["securities"]]
        assert tickers == ["HOUSE", "VTI"]
        assert r.json()["pagination"]["total_count"] == 2
        assert alice.client.get(f"{URL}/{shared.id}").json()["manual"] is False
        got = alice.client.get(f"{URL}/{mine.id}").json()
        assert got["manual"] is True and got["exchange_mic"] is None
        assert_error(alice.client.get(f"{URL}/{theirs.id}"), 404, "not_found")
        assert_error(alice.client.get(f"{URL}/nope"), 404, "not_found")
        assert alice.client.get(URL, {"search": "secret"}).json()["securities"] == []

    def test_search_and_ticker_filters(self, alice):
        Security.objects.create(ticker="VTI", name="Vanguard Total Stock Market")
        Security.objects.create(ticker="VTI", exchange_mic="ARCX", name="Vanguard Total")
        Security.objects.create(ticker="VXUS", name="Vanguard Total International")
        Security.objects.create(ticker="AAPL", name="Apple")
        assert len(alice.client.get(URL, {"search": "vanguard"}).json()["securities"]) == 3
        assert len(alice.client.get(URL, {"search": "aap"}).json()["securities"]) == 1
        assert len(alice.client.get(URL, {"ticker": "vti"}).json()["securities"]) == 2
        (one,) = alice.client.get(URL, {"ticker": "VTI|ARCX"}).json()["securities"]
        assert one["exchange_mic"] == "ARCX"
        assert_error(alice.client.get(URL, {"search": "x" * 300}), 422, "validation_failed")

    def test_trade_by_manual_ticker_is_private(self, alice, charlie):
        account = investment(alice)
        r = alice.client.post(
            "/api/v1/trades",
            {
                "trade": {
                    "account_id": str(account.id),
                    "date": "2024-01-02",
                    "manual_ticker": "grandpa's fund",
                    "qty": 1,
                    "price": 1,
                }
            },
            format="json",
        )
        assert r.status_code == 201, r.content
        assert charlie.client.get(URL).json()["securities"] == []
        # the same manual ticker in charlie's household is charlie's own security
        r = charlie.client.post(
            "/api/v1/trades",
            {
                "trade": {
                    "account_id": str(investment(charlie).id),
                    "date": "2024-01-02",
                    "manual_ticker": "GRANDPA'S FUND",
                    "qty": 1,
                    "price": 1,
                }
            },
            format="json",
        )
        assert r.status_code == 201
        assert Security.objects.filter(ticker="GRANDPA'S FUND").count() == 2

    def test_read_key_reads(self, alice):
        assert alice.read_client.get(URL).status_code == 200


def upstream(ticker, name, qty, price=None, value=None, cost=None, currency="USD"):
    return UpstreamHolding(
        ticker=ticker,
        name=name,
        quantity=Decimal(qty),
        price=None if price is None else Decimal(price),
        value=None if value is None else Decimal(value),
        cost_basis=None if cost is None else Decimal(cost),
        currency=currency,
    )


@pytest.mark.django_db
class TestProviderHoldings:
    def test_replace_finds_or_creates_securities_and_replaces_rows(self, alice, charlie):
        account = investment(alice)
        vti = Security.objects.create(ticker="VTI", name="Vanguard")
        count = holdings_replace_from_provider(
            account=account,
            holdings=[
                upstream("VTI", "Vanguard Total", "3", price="250", cost="700"),
                upstream("VTI", "Vanguard Total", "2", price="250", value="500"),
                upstream(None, "Employer Plan Fund", "10.5", value="1050"),
                upstream("", "Old Bond", "1", price="99.5"),
            ],
            as_of=dt.date(2024, 6, 1),
        ).count
        assert count == 3
        rows = {h.security.ticker: h for h in Holding.objects.filter(account=account)}
        assert rows["VTI"].security == vti and rows["VTI"].qty == Decimal(5)
        assert rows["VTI"].market_value == Decimal(1250) and rows["VTI"].cost_basis == Decimal(700)
        fund = rows["EMPLOYER PLAN FUND"].security
        assert fund.manual and fund.family == alice.family and fund.name == "Employer Plan Fund"
        assert rows["OLD BOND"].market_value == Decimal("99.5")
        assert {h.source for h in rows.values()} == {"provider"}
        assert {h.date for h in rows.values()} == {dt.date(2024, 6, 1)}

        # the next sync replaces: gone positions disappear, name-only ones are found again
        count = holdings_replace_from_provider(
            account=account,
            holdings=[upstream(None, "Employer Plan Fund", "11", value="1200")],
            as_of=dt.date(2024, 6, 2),
        ).count
        assert count == 1
        (only,) = Holding.objects.filter(account=account)
        assert only.security == fund and only.qty == Decimal(11)
        assert Security.objects.filter(family=alice.family).count() == 2
        # charlie sees none of it
        assert charlie.client.get("/api/v1/holdings").json()["holdings"] == []
        assert charlie.client.get(URL, {"search": "employer"}).json()["securities"] == []
        r = alice.client.get("/api/v1/holdings", {"account_id": str(account.id)})
        (held,) = r.json()["holdings"]
        assert held["source"] == "provider" and held["market_value"] == "1200.00"
        assert held["cost_basis"] is None and held["average_cost"] is None

    def test_trades_do_not_overwrite_provider_holdings(self, alice):
        account = investment(alice)
        holdings_replace_from_provider(
            account=account, holdings=[upstream("VTI", "V", "7", price="1")], as_of=dt.date.today()
        )
        r = alice.client.post(
            "/api/v1/trades",
            {
                "trade": {
                    "account_id": str(account.id),
                    "date": "2024-01-02",
                    "ticker": "VTI",
                    "qty": 1,
                    "price": 1,
                }
            },
            format="json",
        )
        assert r.status_code == 201
        assert holdings_recompute_from_trades(account=account) == 0
        (only,) = Holding.objects.filter(account=account)
        assert only.qty == Decimal(7) and only.source == "provider"

    def test_holdings_filter_is_validated(self, alice):
        assert_error(
            alice.client.get("/api/v1/holdings", {"account_id": "x"}), 422, "validation_failed"
        )


@pytest.mark.django_db
def test_deleting_a_household_removes_its_trades_and_manual_securities(alice, charlie):
    from django.db.models import RestrictedError

    from finance.models import Family

    shared = Security.objects.create(ticker="VTI")
    for household, ticker in ((alice, "MINE"), (charlie, None)):
        account = investment(household)
        fields = {"manual_ticker": ticker} if ticker else {"security_id": str(shared.id)}
        r = household.client.post(
            "/api/v1/trades",
            {
                "trade": {
                    "account_id": str(account.id),
                    "date": "2024-01-02",
                    "qty": 1,
                    "price": 1,
                    **fields,
                }
            },
            format="json",
        )
        assert r.status_code == 201
    # a shared security that households trade cannot be deleted from under them
    with pytest.raises(RestrictedError):
        shared.delete()
    Family.objects.filter(pk=alice.family.pk).delete()
    assert not Security.objects.filter(ticker="MINE").exists()
    assert Holding.objects.filter(family=charlie.family).count() == 1
