"""A provider-linked brokerage against the fake Lunch Flow server over real HTTP: its reported
balance is its value, `cash_balance = balance - holdings_value` from the provider's holdings,
and the prices it reports become the household's price points, which value the household's
manual accounts holding the same security (a price posted through the API still wins on its
day)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from finance.ledger import ledger_check
from finance.models import Account
from tests.providers.conftest import connect, day, run_sync
from trades.models import Security


def aapl(qty: int, price: str, value: str) -> dict:
    return {
        "security": {"name": "Apple", "tickerSymbol": "AAPL", "currency": "USD"},
        "quantity": qty,
        "price": price,
        "value": value,
        "costBasis": 300,
        "currency": "USD",
    }


@pytest.fixture
def broker(lunchflow):
    lunchflow.scenario.add_account("b1", "Brokerage", "USD", "500")
    lunchflow.scenario.holdings["b1"] = [aapl(2, "200", "400")]
    return lunchflow.scenario


def figures(household, account):
    body = household.client.get(f"/api/v1/accounts/{account.id}").json()
    return body["balance"], body["cash_balance"], body["holdings_value"]


def test_a_linked_brokerage_is_worth_its_reported_balance(alice, broker):
    manual = alice.account(name="Manual", account_type="investment")
    r = alice.client.post(
        "/api/v1/trades",
        {"trade": {"account_id": str(manual.id), "date": day(10), "ticker": "AAPL", "qty": 1,
                   "price": 150}},
        format="json",
    )  # fmt: skip
    assert r.status_code == 201, r.content
    assert figures(alice, manual) == ("0.00", "-150.00", "150.00")

    connection = connect(alice)
    assert run_sync(connection).status == "completed"
    linked = Account.objects.get(name="Brokerage")
    # the provider's balance is the value; its holdings are worth 2 x 200
    assert figures(alice, linked) == ("500.00", "100.00", "400.00")
    # its price is the household's provider price point of today
    security = Security.objects.get(ticker="AAPL")
    points = alice.client.get("/api/v1/security_prices", {"security_id": str(security.id)}).json()
    today = day(0)
    assert [(p["date"], p["price"], p["source"]) for p in points["security_prices"]] == [
        (today, "200.00", "provider"),
        (day(10), "150.00", "trade"),
    ]
    # which values the manual account's share from today on
    assert figures(alice, manual) == ("50.00", "-150.00", "200.00")
    series = alice.client.get(
        f"/api/v1/accounts/{manual.id}/balances", {"start_date": day(11), "end_date": today}
    ).json()["balances"]
    assert [row["balance"] for row in series] == ["0.00"] * 11 + ["50.00"]

    # the next sync: a new price and balance
    broker.balances["b1"]["amount"] = "520"
    broker.holdings["b1"] = [aapl(2, "210", "420")]
    assert run_sync(connection).status == "completed"
    assert figures(alice, linked) == ("520.00", "100.00", "420.00")
    assert figures(alice, manual) == ("60.00", "-150.00", "210.00")

    # the household's own price of the day beats the provider's for its manual account; the
    # linked account's holdings are what the provider says
    r = alice.client.post(
        "/api/v1/security_prices",
        {"security_price": {"security_id": str(security.id), "date": today, "price": "205"}},
        format="json",
    )
    assert r.status_code == 201, r.content
    assert figures(alice, manual) == ("55.00", "-150.00", "205.00")
    assert figures(alice, linked) == ("520.00", "100.00", "420.00")
    assert ledger_check(family=alice.family).problems == []
    linked.refresh_from_db()
    assert (linked.balance, linked.holdings_value) == (Decimal("520"), Decimal("420"))


def test_holdings_without_a_price_are_valued_by_their_value(alice, broker):
    broker.holdings["b1"] = [aapl(4, None, "1000")]
    assert run_sync(connect(alice)).status == "completed"
    linked = Account.objects.get(name="Brokerage")
    assert figures(alice, linked) == ("500.00", "-500.00", "1000.00")
    security = Security.objects.get(ticker="AAPL")
    (point,) = alice.client.get(
        "/api/v1/security_prices", {"security_id": str(security.id)}
    ).json()["security_prices"]
    assert (point["price"], point["source"]) == ("250.00", "provider")


def test_a_resync_at_unchanged_prices_reads_the_days_price_points_once(alice, broker):
    """The day's provider price points are read in one query, not one get_or_create per
    holding: a re-sync at unchanged prices writes none, a changed price is still stored."""
    from django.db import connection as db
    from django.test.utils import CaptureQueriesContext

    broker.holdings["b1"] = [aapl(2, "200", "400"), {**aapl(1, "50", "50"), "security": {
        "name": "Microsoft", "tickerSymbol": "MSFT", "currency": "USD"}}]  # fmt: skip
    connection = connect(alice)
    assert run_sync(connection).status == "completed"
    with CaptureQueriesContext(db) as queries:
        assert run_sync(connection).status == "completed"
    points = [q["sql"] for q in queries if '"trades_securityprice"' in q["sql"]]
    assert len(points) == 1 and points[0].startswith("SELECT"), points

    broker.holdings["b1"][0] = aapl(2, "210", "420")
    assert run_sync(connection).status == "completed"
    security = Security.objects.get(ticker="AAPL")
    body = alice.client.get("/api/v1/security_prices", {"security_id": str(security.id)}).json()
    assert [p["price"] for p in body["security_prices"] if p["source"] == "provider"] == [
        "210.00"
    ], body
