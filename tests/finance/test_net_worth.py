"""GET /net_worth: a USD household with EUR, GBP and JPY accounts, rates fetched from the
(fake) European Central Bank; household rates preferred, crosses through the euro, 7 days of
staleness, missing rates named and never counted 1:1."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.core.management import call_command

from finance.models import ExchangeRate
from finance.selectors.dashboard import family_today
from finance.tasks import exchange_rates_fetch_task
from tests.conftest import assert_error
from tests.finance.fx_helpers import create_account, create_transaction, every_day


def _ledger(household, today: dt.date) -> dict[str, str]:
    """USD 1,000 checking, EUR 2,000 savings, GBP 500, JPY 10,000, a USD card owing 300: all
    from 20 days ago."""
    day = today - dt.timedelta(days=20)
    ids = {
        "usd": create_account(household, "Checking", "USD"),
        "eur": create_account(household, "Sparkonto", "EUR"),
        "gbp": create_account(household, "ISA", "GBP"),
        "jpy": create_account(household, "Yokin", "JPY"),
        "card": create_account(household, "Card", "USD", "credit_card"),
    }
    for key, amount in (
        ("usd", "-1000"),
        ("eur", "-2000"),
        ("gbp", "-500"),
        ("jpy", "-10000"),
        ("card", "300"),
    ):
        create_transaction(household, ids[key], day, amount)
    return ids


def _rates(ecb, today: dt.date, **rates: str) -> None:
    every_day(ecb.scenario, today - dt.timedelta(days=60), today, **rates)


def _day(body: dict, day: dt.date) -> dict:
    return next(p for p in body["series"] if p["date"] == day.isoformat())


@pytest.mark.django_db
@pytest.mark.parametrize("fetch", ["command", "beat task"])
def test_net_worth_converts_every_account_and_names_the_currency_without_a_rate(alice, ecb, fetch):
    today = family_today(alice.family)
    ids = _ledger(alice, today)
    _rates(ecb, today, USD="1.2", GBP="0.8")  # the ECB quotes no JPY here
    if fetch == "command":
        call_command("fetch_exchange_rates")
    else:
        exchange_rates_fetch_task()
    assert ExchangeRate.objects.filter(family__isnull=True).exists()

    r = alice.client.get("/api/v1/net_worth")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["currency"] == "USD"
    assert len(body["series"]) == 30
    assert body["series"][-1]["date"] == today.isoformat()
    # EUR 2,000 x 1.2 = 2,400; GBP 500 x 1.2 / 0.8 = 750; JPY left out, never 1:1
    assert body["series"][-1] == {
        "date": today.isoformat(),
        "assets": "4150.00",
        "liabilities": "300.00",
        "net_worth": "3850.00",
    }
    before = _day(body, today - dt.timedelta(days=21))
    assert before == {
        "date": before["date"],
        "assets": "0.00",
        "liabilities": "0.00",
        "net_worth": "0.00",
    }
    assert body["missing_rates"] == [{"currency": "JPY", "date": today.isoformat()}]
    accounts = {a["id"]: a for a in body["accounts"]}
    assert accounts[ids["eur"]] == {
        "id": ids["eur"],
        "name": "Sparkonto",
        "currency": "EUR",
        "balance": "2000.00",
        "converted_balance": "2400.00",
    }
    assert accounts[ids["gbp"]]["converted_balance"] == "750.00"
    assert accounts[ids["usd"]]["converted_balance"] == "1000.00"
    assert accounts[ids["card"]]["converted_balance"] == "300.00"
    assert accounts[ids["jpy"]]["balance"] == "10000"
    assert accounts[ids["jpy"]]["converted_balance"] is None
    assert Decimal(body["series"][-1]["net_worth"]) == Decimal("3850.00")


@pytest.mark.django_db
def test_any_currency_crossed_through_the_euro(alice, ecb):
    today = family_today(alice.family)
    _ledger(alice, today)
    _rates(ecb, today, USD="1.2", GBP="0.8", JPY="160")
    call_command("fetch_exchange_rates")
    body = alice.client.get("/api/v1/net_worth?currency=gbp").json()
    assert body["currency"] == "GBP" and body["missing_rates"] == []
    # USD 1,000 x 0.8 / 1.2 = 666.67; EUR 1,600; GBP 500; JPY 10,000 x 0.8 / 160 = 50; card 200
    assert body["series"][-1]["assets"] == str(
        Decimal("666.67") + Decimal("1600.00") + Decimal("500.00") + Decimal("50.00")
    )
    assert body["series"][-1]["liabilities"] == "200.00"
    body = alice.client.get("/api/v1/net_worth?currency=JPY").json()
    # USD 1,000 x 160 / 1.2 = 133,333; EUR 320,000; GBP 100,000; JPY 10,000; card 40,000
    assert body["series"][-1]["assets"] == "563333"
    assert body["series"][-1]["net_worth"] == "523333"


@pytest.mark.django_db
def test_household_rates_are_preferred_in_either_direction(alice, ecb):
    today = family_today(alice.family)
    ids = _ledger(alice, today)
    _rates(ecb, today, USD="1.2", GBP="0.8")
    call_command("fetch_exchange_rates")
    yesterday = today - dt.timedelta(days=1)
    for src, dst, rate in (("EUR", "USD", "1.25"), ("USD", "GBP", "0.7")):
        r = alice.client.post(
            "/api/v1/exchange_rates",
            {
                "exchange_rate": {
                    "date": yesterday.isoformat(),
                    "from_currency": src,
                    "to_currency": dst,
                    "rate": rate,
                }
            },
            format="json",
        )
        assert r.status_code == 201
    body = alice.client.get("/api/v1/net_worth").json()
    accounts = {a["id"]: a["converted_balance"] for a in body["accounts"]}
    assert accounts[ids["eur"]] == "2500.00"  # 2,000 x the household's 1.25
    assert accounts[ids["gbp"]] == "714.29"  # 500 / the household's USD->GBP 0.7
    assert _day(body, today)["assets"] == "4214.29"
    # the day before the household's rates, the system's
    assert _day(body, yesterday - dt.timedelta(days=1))["assets"] == "4150.00"


@pytest.mark.django_db
def test_a_rate_serves_seven_days_then_the_currency_is_missing(alice, ecb):
    today = family_today(alice.family)
    ids = _ledger(alice, today)
    last_rate = today - dt.timedelta(days=10)
    ecb.scenario.add_day(last_rate, USD="1.2", GBP="0.8")
    call_command("fetch_exchange_rates")
    body = alice.client.get("/api/v1/net_worth").json()
    seventh = _day(body, last_rate + dt.timedelta(days=7))
    eighth = _day(body, last_rate + dt.timedelta(days=8))
    assert seventh["assets"] == "4150.00"
    assert eighth["assets"] == "1000.00"  # only the USD account: no usable EUR or GBP rate
    assert body["missing_rates"] == [
        {"currency": "EUR", "date": today.isoformat()},
        {"currency": "GBP", "date": today.isoformat()},
        {"currency": "JPY", "date": today.isoformat()},
    ]
    accounts = {a["id"]: a["converted_balance"] for a in body["accounts"]}
    assert accounts[ids["eur"]] is None and accounts[ids["usd"]] == "1000.00"
    # the rate's day and the seven after it need nothing more
    end = (last_rate + dt.timedelta(days=7)).isoformat()
    body = alice.client.get(f"/api/v1/net_worth?start_date={last_rate}&end_date={end}").json()
    assert [m["currency"] for m in body["missing_rates"]] == ["JPY"]


@pytest.mark.django_db
def test_another_households_rates_and_accounts_are_invisible(alice, charlie, ecb):
    today = family_today(alice.family)
    _ledger(alice, today)
    create_account(charlie, "Charlie's millions", "USD")
    r = charlie.client.post(
        "/api/v1/exchange_rates",
        {
            "exchange_rate": {
                "date": today.isoformat(),
                "from_currency": "EUR",
                "to_currency": "USD",
                "rate": "100",
            }
        },
        format="json",
    )
    assert r.status_code == 201
    body = alice.client.get("/api/v1/net_worth").json()
    assert "Charlie" not in str(body)
    # charlie's EUR rate does not convert alice's EUR
    assert [m["currency"] for m in body["missing_rates"]] == ["EUR", "GBP", "JPY"]
    assert alice.client.get("/api/v1/exchange_rates").json()["exchange_rates"] == []


@pytest.mark.django_db
def test_disabled_accounts_and_zero_balances_need_no_rate(alice, ecb):
    today = family_today(alice.family)
    create_account(alice, "Empty CHF", "CHF")
    old = create_account(alice, "Old SEK", "SEK")
    create_transaction(alice, old, today, "-10")
    r = alice.client.patch(
        f"/api/v1/accounts/{old}", {"account": {"status": "disabled"}}, format="json"
    )
    assert r.status_code == 200
    body = alice.client.get("/api/v1/net_worth").json()
    assert body["missing_rates"] == []
    assert [(a["name"], a["converted_balance"]) for a in body["accounts"]] == [
        ("Empty CHF", "0.00")
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "fields"),
    [
        ("start_date=2024-1-01", {"start_date"}),
        ("end_date=yesterday", {"end_date"}),
        ("currency=EURO", {"currency"}),
        ("currency=XXX", {"currency"}),
        ("start_date=2024-05-02&end_date=2024-05-01", {"end_date"}),
        ("start_date=1899-12-31&end_date=1900-01-05", {"start_date"}),
        ("start_date=1900-01-01&end_date=1950-01-01", {"start_date"}),
        ("end_date=9999-01-01&currency=US", {"end_date", "currency"}),
    ],
)
def test_bad_parameters_are_a_422_naming_them(alice, query, fields):
    r = alice.client.get(f"/api/v1/net_worth?{query}")
    errors = assert_error(r, 422, "validation_failed")["errors"]
    assert {e.split(":")[0] for e in errors} == fields, errors


@pytest.mark.django_db
def test_forty_years_of_days_are_accepted(alice):
    r = alice.client.get("/api/v1/net_worth?start_date=1960-01-01&end_date=1999-12-31")
    assert r.status_code == 200
    assert len(r.json()["series"]) == (dt.date(1999, 12, 31) - dt.date(1960, 1, 1)).days + 1
