"""`POST /api/v1/security_prices` and `GET /api/v1/security_prices` over HTTP: what is
refused (422 naming each field, nothing written), which currency a price may have, replacing
a day's price, filters, and isolation between households."""

from __future__ import annotations

import pytest

from tests.conftest import assert_error
from tests.trades.factories import SecurityFactory, SecurityPriceFactory
from trades.models import Security, SecurityPrice

pytestmark = pytest.mark.django_db
URL = "/api/v1/security_prices"


def post(household, body, *, client=None):
    return (client or household.client).post(URL, body, format="json")


def point(security, date="2024-05-02", value="10", **fields):
    return {
        "security_price": {
            "security_id": str(security.id),
            "date": date,
            "price": value,
            **fields,
        }
    }


def brokerage(household, **kwargs):
    return household.account(account_type="investment", **kwargs)


def buy(household, account, ticker="VTI", **fields):
    body = {
        "trade": {
            "account_id": str(account.id),
            "date": "2024-05-02",
            "ticker": ticker,
            "qty": 1,
            "price": 100,
            **fields,
        }
    }
    return household.client.post("/api/v1/trades", body, format="json")


@pytest.fixture
def vti():
    return Security.objects.create(ticker="VTI", name="Vanguard Total")


def fields(body) -> list[str]:
    """The fields a 422 names (the serializer's under the root key, the service's bare)."""
    return sorted(e.split(":")[0].removeprefix("security_price.") for e in body["errors"])


def api_points() -> int:
    return SecurityPrice.objects.filter(source="api").count()


class TestRefusals:
    def test_an_empty_body_names_every_missing_field(self, alice):
        body = assert_error(post(alice, {"security_price": {}}), 422, "validation_failed")
        assert fields(body) == ["date", "price", "security_id"]
        assert_error(post(alice, {"security_id": "x"}), 422, "validation_failed")

    @pytest.mark.parametrize(
        "value",
        ["0", "-1", "1e999999999", "NaN", "Infinity", "1000000000000000", "1.123456789", "abc"],
    )
    def test_a_price_that_is_not_positive_finite_and_bounded_is_refused(self, alice, vti, value):
        body = assert_error(post(alice, point(vti, value=value)), 422, "validation_failed")
        assert fields(body) == ["price"]
        assert api_points() == 0

    @pytest.mark.parametrize("date", ["1899-12-31", "2024-13-01", "02/05/2024", "9999-01-01"])
    def test_a_date_out_of_bounds_or_unreadable_is_refused(self, alice, vti, date):
        body = assert_error(post(alice, point(vti, date=date)), 422, "validation_failed")
        assert fields(body) == ["date"]

    def test_another_households_security_or_an_unknown_one_is_refused(self, alice, charlie):
        theirs = SecurityFactory(family=charlie.family, ticker="MINE")
        for security_id in (str(theirs.id), "8f14e45f-ceea-467f-a8c8-000000000000"):
            body = point(theirs)
            body["security_price"]["security_id"] = security_id
            r = assert_error(post(alice, body), 422, "validation_failed")
            assert r["errors"] == ["security_id: does not exist in this household"]
        assert SecurityPrice.objects.count() == 0

    def test_a_read_key_cannot_post(self, alice, vti):
        assert_error(post(alice, point(vti), client=alice.read_client), 403, "insufficient_scope")

    def test_a_bad_currency_is_refused(self, alice, vti):
        body = assert_error(post(alice, point(vti, currency="ZZZ")), 422, "validation_failed")
        assert fields(body) == ["currency"]


class TestCurrency:
    def test_a_price_no_account_trading_the_security_could_use_is_refused(self, alice, vti):
        account = brokerage(alice, currency="USD")
        assert buy(alice, account).status_code == 201
        body = assert_error(post(alice, point(vti, currency="EUR")), 422, "validation_failed")
        assert body["errors"] == [
            "currency: must be the currency of an account that trades or holds this security"
            " (USD); prices are not converted between currencies"
        ]
        r = post(alice, point(vti, currency="usd"))
        assert r.status_code == 201 and r.json()["currency"] == "USD"

    def test_without_currency_it_is_that_of_the_accounts_trading_it(self, alice, vti):
        assert buy(alice, brokerage(alice, currency="GBP")).status_code == 201
        assert post(alice, point(vti)).json()["currency"] == "GBP"

    def test_accounts_in_two_currencies_need_it_named(self, alice, vti):
        assert buy(alice, brokerage(alice, currency="USD")).status_code == 201
        assert buy(alice, brokerage(alice, currency="EUR")).status_code == 201
        body = assert_error(post(alice, point(vti)), 422, "validation_failed")
        assert body["errors"] == ["currency: is required: accounts in EUR, USD trade this security"]
        assert post(alice, point(vti, currency="EUR")).status_code == 201

    def test_untraded_it_defaults_to_the_securitys_then_the_households(self, alice, vti):
        assert post(alice, point(vti)).json()["currency"] == "USD"
        fund = SecurityFactory(family=alice.family, ticker="FUND", currency="JPY")
        assert post(alice, point(fund, value="1500")).json()["price"] == "1500"

    def test_a_buy_or_sell_is_in_its_accounts_currency(self, alice):
        account = brokerage(alice, currency="USD")
        body = assert_error(buy(alice, account, currency="EUR"), 422, "validation_failed")
        assert fields(body) == ["currency"]
        created = buy(alice, account).json()
        r = alice.client.patch(
            f"/api/v1/trades/{created['id']}", {"trade": {"currency": "EUR"}}, format="json"
        )
        assert_error(r, 422, "validation_failed")
        # cash kinds keep their currency rules
        body = {
            "trade": {
                "account_id": str(account.id),
                "date": "2024-05-03",
                "type": "dividend",
                "amount": "5",
                "currency": "EUR",
            }
        }
        dividend = alice.client.post("/api/v1/trades", body, format="json")
        assert dividend.status_code == 201, dividend.content


class TestWriteAndRead:
    def test_a_second_price_of_the_day_replaces_the_first(self, alice, vti):
        first = post(alice, point(vti, value="10.5"))
        assert first.status_code == 201
        again = post(alice, point(vti, value="11"))
        assert again.status_code == 200, again.content
        assert again.json()["id"] == first.json()["id"] and again.json()["price"] == "11.00"
        assert post(alice, point(vti, value="11")).status_code == 200
        assert api_points() == 1
        r = alice.client.get(f"{URL}/{first.json()['id']}")
        assert r.status_code == 200 and r.json()["price"] == "11.00"

    def test_the_list_filters_by_security_and_dates_newest_first(self, alice, vti):
        other = SecurityFactory(family=alice.family, ticker="OTHER")
        for day in ("2024-05-01", "2024-05-03", "2024-05-05"):
            assert post(alice, point(vti, date=day)).status_code == 201
        assert post(alice, point(other, date="2024-05-04")).status_code == 201
        r = alice.client.get(URL, {"security_id": str(vti.id), "start_date": "2024-05-02"})
        assert r.status_code == 200
        body = r.json()
        assert [p["date"] for p in body["security_prices"]] == ["2024-05-05", "2024-05-03"]
        assert body["pagination"]["total_count"] == 2
        everything = alice.client.get(URL, {"end_date": "2024-05-04"}).json()["security_prices"]
        assert [(p["security"]["ticker"], p["date"]) for p in everything] == [
            ("OTHER", "2024-05-04"),
            ("VTI", "2024-05-03"),
            ("VTI", "2024-05-01"),
        ]
        for bad in ({"security_id": "nope"}, {"start_date": "2024-5-1"}):
            assert_error(alice.client.get(URL, bad), 422, "validation_failed")

    def test_another_households_prices_are_invisible(self, alice, charlie, vti):
        theirs = SecurityPriceFactory(family=charlie.family, security=vti, price="99")
        assert alice.client.get(URL).json()["security_prices"] == []
        assert_error(alice.client.get(f"{URL}/{theirs.id}"), 404, "not_found")
        # a shared security priced by one household is not priced for another
        assert post(alice, point(vti, date="2024-05-01", value="10")).status_code == 201
        assert SecurityPrice.objects.filter(family=charlie.family).get().price == 99
