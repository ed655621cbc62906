"""GET /cash_flow: income and expense per period and category in one currency, transfers and
excluded rows left out, foreign rows converted at their day's rate."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import call_command

from finance.models import Transfer
from tests.conftest import assert_error
from tests.factories import CategoryFactory
from tests.finance.fx_helpers import create_account, create_transaction, every_day

JAN, FEB = dt.date(2024, 1, 10), dt.date(2024, 2, 5)


@pytest.fixture
def ledger(alice, ecb):
    """January: salary 3,000 in, groceries 100 + EUR 50 (at 1.2: 60) out, a 500 transfer to
    savings and an excluded 999 purchase; February: 20 uncategorised out, EUR 10 refund in."""
    every_day(ecb.scenario, dt.date(2023, 12, 20), dt.date(2024, 2, 29), USD="1.2", GBP="0.8")
    call_command("fetch_exchange_rates", "--history")
    checking = create_account(alice, "Checking", "USD")
    savings = create_account(alice, "Savings", "USD")
    euro = create_account(alice, "Girokonto", "EUR")
    salary = CategoryFactory(family=alice.family, name="Salary")
    groceries = CategoryFactory(family=alice.family, name="Groceries")
    add = create_transaction
    add(alice, checking, JAN, "-3000", category_id=str(salary.pk))
    add(alice, checking, JAN, "100", category_id=str(groceries.pk))
    # (a transaction's currency defaults to the household's, not its account's: say it)
    add(
        alice, euro, JAN + dt.timedelta(days=1), "50", currency="EUR", category_id=str(groceries.pk)
    )
    add(alice, checking, JAN + dt.timedelta(days=2), "500", name="To savings")
    add(alice, savings, JAN + dt.timedelta(days=2), "-500", name="From checking")
    add(alice, checking, JAN + dt.timedelta(days=3), "999", excluded=True)
    add(alice, checking, FEB, "20")
    add(alice, euro, FEB, "-10", currency="EUR", category_id=str(groceries.pk))
    assert Transfer.objects.filter(family=alice.family).count() == 1  # matched
    return {"salary": str(salary.pk), "groceries": str(groceries.pk)}


@pytest.mark.django_db
def test_cash_flow_per_month_and_category(alice, ledger):
    r = alice.client.get("/api/v1/cash_flow?start_date=2024-01-01&end_date=2024-02-29")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["currency"] == "USD" and body["missing_rates"] == []
    jan, feb = body["periods"]
    assert jan == {
        "start_date": "2024-01-01",
        "end_date": "2024-01-31",
        "income": "3000.00",
        "expense": "160.00",
        "net": "2840.00",
        "categories": [
            {
                "category_id": ledger["groceries"],
                "name": "Groceries",
                "income": "0.00",
                "expense": "160.00",
            },
            {
                "category_id": ledger["salary"],
                "name": "Salary",
                "income": "3000.00",
                "expense": "0.00",
            },
        ],
    }
    assert feb == {
        "start_date": "2024-02-01",
        "end_date": "2024-02-29",
        "income": "12.00",
        "expense": "20.00",
        "net": "-8.00",
        "categories": [
            {
                "category_id": ledger["groceries"],
                "name": "Groceries",
                "income": "12.00",
                "expense": "0.00",
            },
            {"category_id": None, "name": "Uncategorised", "income": "0.00", "expense": "20.00"},
        ],
    }


@pytest.mark.django_db
def test_cash_flow_in_another_currency_and_by_week_and_day(alice, ledger):
    body = alice.client.get(
        "/api/v1/cash_flow?start_date=2024-01-10&end_date=2024-01-21&interval=week&currency=EUR"
    ).json()
    assert [(p["start_date"], p["end_date"]) for p in body["periods"]] == [
        ("2024-01-10", "2024-01-14"),
        ("2024-01-15", "2024-01-21"),
    ]
    first = body["periods"][0]
    # USD 3,000 / 1.2 = EUR 2,500; USD 100 / 1.2 = 83.33 plus EUR 50
    assert (first["income"], first["expense"], first["net"]) == ("2500.00", "133.33", "2366.67")
    assert body["periods"][1]["categories"] == [] and body["periods"][1]["net"] == "0.00"
    body = alice.client.get(
        "/api/v1/cash_flow?start_date=2024-01-10&end_date=2024-01-12&interval=day"
    ).json()
    assert [(p["start_date"], p["income"], p["expense"]) for p in body["periods"]] == [
        ("2024-01-10", "3000.00", "100.00"),
        ("2024-01-11", "0.00", "60.00"),
        ("2024-01-12", "0.00", "0.00"),  # the transfer's day
    ]


@pytest.mark.django_db
def test_rows_without_a_rate_are_left_out_and_named(alice, ledger):
    yen = create_account(alice, "Yokin", "JPY")
    create_transaction(alice, yen, JAN, "5000", currency="JPY")
    body = alice.client.get("/api/v1/cash_flow?start_date=2024-01-01&end_date=2024-01-31").json()
    assert body["periods"][0]["expense"] == "160.00"
    assert body["missing_rates"] == [{"currency": "JPY", "date": JAN.isoformat()}]


@pytest.mark.django_db
def test_defaults_are_twelve_months_in_the_households_currency(alice):
    body = alice.client.get("/api/v1/cash_flow").json()
    assert body["currency"] == "USD" and len(body["periods"]) == 12
    assert body["periods"][0]["start_date"].endswith("-01")


@pytest.mark.django_db
def test_another_households_rows_are_invisible(alice, charlie, ledger):
    theirs = create_account(charlie, "Charlie", "USD")
    create_transaction(charlie, theirs, JAN, "12345")
    body = alice.client.get("/api/v1/cash_flow?start_date=2024-01-01&end_date=2024-01-31").json()
    assert body["periods"][0]["expense"] == "160.00"
    body = charlie.client.get("/api/v1/cash_flow?start_date=2024-01-01&end_date=2024-01-31").json()
    assert body["periods"][0]["expense"] == "12345.00" and "Groceries" not in str(body)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "fields"),
    [
        ("interval=year", {"interval"}),
        ("interval=Month&currency=dollars", {"interval", "currency"}),
        ("start_date=2024-02-30", {"start_date"}),
        ("start_date=2024-03-01&end_date=2024-02-01", {"end_date"}),
        ("start_date=1800-01-01&end_date=1800-12-31&interval=month", {"start_date", "end_date"}),
        ("start_date=1950-01-01&end_date=2000-01-01&interval=day", {"start_date"}),
    ],
)
def test_bad_parameters_are_a_422_naming_them(alice, query, fields):
    r = alice.client.get(f"/api/v1/cash_flow?{query}")
    errors = assert_error(r, 422, "validation_failed")["errors"]
    assert {e.split(":")[0] for e in errors} == fields, errors


@pytest.mark.django_db
def test_a_century_of_months_is_fine(alice):
    r = alice.client.get("/api/v1/cash_flow?start_date=1901-01-01&end_date=2000-12-31")
    assert r.status_code == 200 and len(r.json()["periods"]) == 1200
