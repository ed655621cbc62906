"""Bounds that never break a household (issue 18; decisions.md "Bounds: money and dates"):
what cannot be stored safely is refused at the door with a 422 naming the field, and every
accepted sequence of writes leaves the household fully usable."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from core.bounds import max_date
from finance.models import Account, AccountBalance, Transaction
from tests.conftest import assert_error

URL = "/api/v1/transactions"
BIG = "9999999999999.9999"


def create(household, account, amount, date="2024-05-01", **extra):
    body = {"account_id": str(account.id), "date": date, "amount": amount, "name": "x", **extra}
    return household.client.post(URL, {"transaction": body}, format="json")


def bulk(household, items):
    return household.client.post(f"{URL}/bulk", {"transactions": items}, format="json")


@pytest.mark.django_db
class TestAmounts:
    @pytest.mark.parametrize(
        "amount",
        [
            "-999999999999999",
            "10000000000000",
            "1e999999999",
            "1E+400000000",
            "NaN",
            "Infinity",
            "-Infinity",
            "1.23456",
        ],
    )
    def test_out_of_range_or_unparsable_is_a_422_naming_amount(self, alice, amount):
        account = alice.account()
        body = assert_error(create(alice, account, amount), 422, "validation_failed")
        assert any(e.startswith("transaction.amount:") for e in body["errors"]), body
        result = bulk(
            alice,
            [{"account_id": str(account.id), "date": "2024-05-01", "amount": amount, "name": "x"}],
        ).json()["results"][0]
        assert result["status"] == 422 and result["errors"][0].startswith("amount:")
        assert not Transaction.objects.exists()

    def test_huge_json_numbers_are_422_not_500(self, alice):
        account = alice.account()
        raw = (
            f'{{"transaction": {{"account_id": "{account.id}", "date": "2024-05-01", '
            '"amount": 1e999999999, "name": "x"}}'
        )
        r = alice.client.generic("POST", URL, raw, content_type="application/json")
        assert_error(r, 422, "validation_failed")

    def test_many_largest_amounts_keep_the_household_usable(self, alice):
        account = alice.account()
        items = [
            {
                "account_id": str(account.id),
                "date": f"2024-05-{1 + i % 28:02d}",
                "amount": "-" + BIG,
                "name": f"big {i}",
            }
            for i in range(200)
        ]
        assert bulk(alice, items).json()["summary"]["created"] == 200
        assert create(alice, account, "-" + BIG).status_code == 201
        for url in (
            URL,
            "/api/v1/accounts",
            f"/api/v1/accounts/{account.id}",
            f"/api/v1/accounts/{account.id}/balances?start_date=2024-04-30",
        ):
            assert alice.client.get(url).status_code == 200, url
        account.refresh_from_db()
        assert account.balance == 201 * Decimal(BIG)  # exact on both databases (core/exact.py)
        assert alice.client.get("/admin/").status_code in (200, 302)

    def test_bulk_accepts_json_numbers_with_a_fraction(self, alice):
        account = alice.account()
        raw = (
            f'{{"transactions": [{{"account_id": "{account.id}", "date": "2024-05-01", '
            '"amount": 12.5, "name": "x"}]}'
        )
        r = alice.client.generic("POST", f"{URL}/bulk", raw, content_type="application/json")
        assert r.status_code == 200, r.content
        result = r.json()["results"][0]
        assert result["status"] == 201 and result["transaction"]["amount"] == "12.50"

    def test_a_trade_whose_value_is_too_large_is_refused(self, alice):
        broker = alice.account(account_type="investment")
        r = alice.client.post(
            "/api/v1/trades",
            {
                "trade": {
                    "account_id": str(broker.id),
                    "date": "2024-05-01",
                    "ticker": "VTI",
                    "qty": "100000000",
                    "price": "1000000",
                }
            },
            format="json",
        )
        body = assert_error(r, 422, "validation_failed")
        assert any("qty" in e.split(":")[0] for e in body["errors"]), body


@pytest.mark.django_db
class TestDates:
    def test_dates_outside_1900_to_five_years_ahead_are_refused(self, alice):
        account = alice.account()
        late = (max_date() + dt.timedelta(days=1)).isoformat()
        for date in ("1899-12-31", "0002-01-01", late):
            body = assert_error(create(alice, account, "5", date=date), 422, "validation_failed")
            assert any(e.startswith("transaction.date:") for e in body["errors"]), body
        assert create(alice, account, "5", date="1900-01-01").status_code == 201
        assert create(alice, account, "5", date=max_date().isoformat()).status_code == 201

    def test_a_write_dated_1900_stores_rows_for_changes_not_for_days(self, alice):
        account = alice.account()
        create(alice, account, "-10", date=dt.date.today().isoformat())
        create(alice, account, "-5", date="1900-01-01")
        # the opening row, 1900-01-01 and today: not one row per day since 1900
        assert AccountBalance.objects.filter(account=account).count() == 3
        account.refresh_from_db()
        assert account.balance == Decimal("15")
        series = alice.client.get(
            f"/api/v1/accounts/{account.id}/balances",
            {"start_date": "1899-12-30", "end_date": "1900-01-02"},
        ).json()["balances"]
        assert [b["balance"] for b in series] == ["0.00", "0.00", "5.00", "5.00"]


@pytest.mark.django_db
def test_an_empty_transaction_names_every_missing_field_at_once(alice):
    body = assert_error(
        alice.client.post(URL, {"transaction": {}}, format="json"), 422, "validation_failed"
    )
    named = {e.split(":")[0].removeprefix("transaction.") for e in body["errors"]}
    assert {"account_id", "date", "amount", "name"} <= named


@pytest.mark.django_db
class TestOpeningBalance:
    def test_balance_on_create_is_the_opening_balance_as_of_its_date(self, alice):
        r = alice.client.post(
            "/api/v1/accounts",
            {"account": {"name": "Savings", "balance": "1000", "balance_date": "2024-05-01"}},
            format="json",
        )
        assert r.status_code == 201, r.content
        assert r.json()["balance"] == "1000.00"
        account = Account.objects.get(pk=r.json()["id"])
        create(alice, account, "100", date="2024-05-10")  # spending after the opening day
        create(alice, account, "30", date="2024-04-20")  # before it: already in the opening
        account.refresh_from_db()
        assert account.balance == Decimal("900")
        series = alice.client.get(
            f"/api/v1/accounts/{account.id}/balances",
            {"start_date": "2024-04-19", "end_date": "2024-05-10"},
        ).json()["balances"]
        by_day = {b["date"]: b["balance"] for b in series}
        assert by_day["2024-04-19"] == "1030.00"
        assert by_day["2024-04-20"] == "1000.00"
        assert by_day["2024-05-01"] == "1000.00"
        assert by_day["2024-05-09"] == "1000.00"
        assert by_day["2024-05-10"] == "900.00"

    def test_balance_date_defaults_to_today(self, alice):
        r = alice.client.post(
            "/api/v1/accounts", {"account": {"name": "Cash", "balance": "50"}}, format="json"
        )
        account = Account.objects.get(pk=r.json()["id"])
        assert account.opening_balance_date == dt.date.today()
        assert r.json()["balance"] == "50.00"
