"""The daily balance series (AccountBalance) and the current balance (issue 3, point 2)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from finance.ledger import ledger_batch
from finance.ledger.balances import account_balances_refresh
from finance.models import Account, AccountBalance
from tests.conftest import assert_error
from tests.factories import ledger_derive


def post(household, account, date, amount, **extra):
    r = household.client.post(
        "/api/v1/transactions",
        {
            "transaction": {
                "account_id": str(account.id),
                "date": date,
                "amount": amount,
                "name": "t",
                **extra,
            }
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    return r.json()


def series(household, account, start, end):
    r = household.client.get(
        f"/api/v1/accounts/{account.id}/balances", {"start_date": start, "end_date": end}
    )
    assert r.status_code == 200, r.content
    return {row["date"]: row["balance"] for row in r.json()["balances"]}


@pytest.mark.django_db
class TestSeries:
    def test_asset_follows_creates_edits_deletes(self, alice):
        account = alice.account()
        post(alice, account, "2024-01-01", "-1000")  # income
        txn = post(alice, account, "2024-01-03", "100")  # expense
        assert series(alice, account, "2023-12-30", "2024-01-04") == {
            "2023-12-30": "0.00",  # the whole asked range: before the first flow, the opening
            "2023-12-31": "0.00",
            "2024-01-01": "1000.00",
            "2024-01-02": "1000.00",
            "2024-01-03": "900.00",
            "2024-01-04": "900.00",
        }
        r = alice.client.get(f"/api/v1/accounts/{account.id}")
        assert r.json()["balance"] == "900.00"
        alice.client.patch(
            f"/api/v1/transactions/{txn['id']}",
            {"transaction": {"amount": "250", "date": "2024-01-02"}},
            format="json",
        )
        assert series(alice, account, "2024-01-01", "2024-01-03") == {
            "2024-01-01": "1000.00",
            "2024-01-02": "750.00",
            "2024-01-03": "750.00",
        }
        alice.client.delete(f"/api/v1/transactions/{txn['id']}")
        assert series(alice, account, "2024-01-02", "2024-01-02") == {"2024-01-02": "1000.00"}
        assert alice.client.get(f"/api/v1/accounts/{account.id}").json()["balance"] == "1000.00"

    def test_liability_goes_up_with_spending_and_excluded_do_not_count(self, alice):
        card = alice.account(account_type=Account.Type.CREDIT_CARD)
        post(alice, card, "2024-02-01", "40")
        post(alice, card, "2024-02-02", "-15")
        post(alice, card, "2024-02-02", "999", excluded=True)
        assert series(alice, card, "2024-02-01", "2024-02-02") == {
            "2024-02-01": "40.00",
            "2024-02-02": "25.00",
        }
        body = alice.client.get(f"/api/v1/accounts/{card.id}").json()
        assert body["balance"] == "25.00" and body["classification"] == "liability"

    def test_an_edit_moves_only_days_from_the_edit_on(self, alice):
        account = alice.account()
        for day in range(1, 11):
            post(alice, account, f"2024-03-{day:02d}", "-10")
        # GIVEN a sentinel on a day before the edit: a recompute that touched it would fix it
        AccountBalance.objects.filter(account=account, date=dt.date(2024, 3, 4)).update(
            balance=Decimal("12345")
        )
        before_ids = dict(
            AccountBalance.objects.filter(
                account=account, date__lt=dt.date(2024, 3, 5)
            ).values_list("date", "id")
        )
        # WHEN a transaction on the 5th is edited
        txn = alice.client.get(
            "/api/v1/transactions",
            {"account_id": str(account.id), "start_date": "2024-03-05", "end_date": "2024-03-05"},
        ).json()["transactions"][0]
        alice.client.patch(
            f"/api/v1/transactions/{txn['id']}", {"transaction": {"amount": "-20"}}, format="json"
        )
        # THEN days before the 5th are untouched (same rows, sentinel kept) ...
        after_ids = dict(
            AccountBalance.objects.filter(
                account=account, date__lt=dt.date(2024, 3, 5)
            ).values_list("date", "id")
        )
        assert after_ids == before_ids
        sentinel = AccountBalance.objects.get(account=account, date=dt.date(2024, 3, 4))
        assert sentinel.balance == Decimal("12345")
        # ... and days from the edit on move by the change (10 more in), in place: the edit's
        # flow moves as a delete and a create would (series_shift), not derived from the 4th
        moved = dict(
            AccountBalance.objects.filter(
                account=account, date__gte=dt.date(2024, 3, 5)
            ).values_list("date", "balance")
        )
        assert moved == {dt.date(2024, 3, d): Decimal(10 * d + 10) for d in range(5, 11)}
        account.refresh_from_db()
        assert account.balance == Decimal("110")

    @pytest.mark.parametrize("account_type", [Account.Type.DEPOSITORY, Account.Type.CREDIT_CARD])
    def test_creates_inside_the_series_recompute_from_their_first_day_as_a_rebuild_would(
        self, alice, account_type
    ):
        """A create or bulk create inside the stored series recomputes it from its first new
        day on: the series and balance must equal a full recompute."""
        account = alice.account(account_type=account_type)
        post(alice, account, "2024-01-01", "-1000.0001")
        post(alice, account, "2024-03-01", "10")
        post(alice, account, "2024-02-10", "33.3333")
        before_first_new = dict(
            AccountBalance.objects.filter(account=account, date__lt="2024-01-20").values_list(
                "date", "id"
            )
        )
        items = [
            {"account_id": str(account.id), "date": d, "amount": a, "name": "b", **x}
            for d, a, x in (
                ("2024-01-20", "5", {}),
                ("2024-01-20", "-5", {}),  # a day whose flows cancel out
                ("2024-01-25", "7.25", {}),
                ("2024-02-29", "-0.01", {}),
                ("2024-03-01", "500", {"excluded": True}),
                ("2024-02-02", "12", {"nature": "income"}),
            )
        ]
        r = alice.client.post("/api/v1/transactions/bulk", {"transactions": items}, format="json")
        assert r.json()["summary"]["created"] == 6
        shifted = list(
            AccountBalance.objects.filter(account=account).values_list("date", "balance")
        )
        kept = dict(
            AccountBalance.objects.filter(account=account, date__lt="2024-01-20").values_list(
                "date", "id"
            )
        )
        assert kept == before_first_new  # rows before the first new day are not touched
        balance = Account.objects.get(pk=account.pk).balance
        account_balances_refresh(account_dates={account.pk: None})
        rebuilt = list(
            AccountBalance.objects.filter(account=account).values_list("date", "balance")
        )
        assert shifted == rebuilt
        assert balance == Account.objects.get(pk=account.pk).balance == rebuilt[-1][1]
        sign = 1 if account_type == Account.Type.CREDIT_CARD else -1
        total = (
            Decimal("-1000.0001") + 10 + Decimal("33.3333") + Decimal("7.25") - Decimal("0.01") - 12
        )
        assert balance == sign * total

    def test_full_refresh_repairs_everything(self, alice):
        account = alice.account()
        post(alice, account, "2024-03-01", "-10")
        AccountBalance.objects.filter(account=account).update(balance=Decimal("7"))
        account_balances_refresh(account_dates={account.pk: None})
        assert AccountBalance.objects.get(account=account, date=dt.date(2024, 3, 1)).balance == 10

    def test_series_runs_to_today_and_carries_forward(self, alice):
        account = alice.account()
        post(alice, account, "2024-01-01", "-5")
        today = timezone.localdate()
        # rows only where the balance changes (and the opening day): not one per calendar day
        assert AccountBalance.objects.filter(account=account).count() == 2
        far = (today + dt.timedelta(days=3)).isoformat()
        rows = series(alice, account, today.isoformat(), far)
        assert list(rows.values()) == ["5.00"] * 4

    def test_reported_balance_wins_and_anchors(self, alice):
        account = alice.account()
        post(alice, account, "2024-01-01", "-100")
        post(alice, account, "2024-01-03", "30")
        at = timezone.make_aware(dt.datetime(2024, 1, 4, 12))
        with ledger_batch(family=account.family) as batch:
            batch.reported_balance(account, Decimal("1000"), at)
        # the reported 1000 on the 4th; going back: 3rd 1000, 2nd 1030 (before the -30), 1st 1030
        assert series(alice, account, "2024-01-01", "2024-01-04") == {
            "2024-01-01": "1030.00",
            "2024-01-02": "1030.00",
            "2024-01-03": "1000.00",
            "2024-01-04": "1000.00",
        }
        post(alice, account, "2024-01-02", "50")
        assert alice.client.get(f"/api/v1/accounts/{account.id}").json()["balance"] == "1000.00"
        assert series(alice, account, "2024-01-01", "2024-01-02") == {
            "2024-01-01": "1080.00",
            "2024-01-02": "1030.00",
        }

    def test_ledger_changed_entry_point(self, alice):
        from tests.factories import TransactionFactory

        account = alice.account()
        TransactionFactory(account=account, amount=Decimal("-7"), date=dt.date(2024, 5, 1))
        ledger_derive(alice.family, {account.pk: dt.date(2024, 5, 1)})
        account.refresh_from_db()
        assert account.balance == Decimal("7")

    def test_range_validation_and_foreign(self, alice, charlie):
        account = alice.account()
        url = f"/api/v1/accounts/{account.id}/balances"
        r = alice.client.get(url, {"start_date": "2024-02-01", "end_date": "2024-01-01"})
        assert_error(r, 422, "validation_failed")
        r = alice.client.get(url, {"start_date": "2000-01-01", "end_date": "2024-01-01"})
        assert_error(r, 422, "validation_failed")
        assert_error(charlie.client.get(url), 404, "not_found")
        r = alice.client.get(url)
        assert r.status_code == 200 and r.json()["balances"] == []


@pytest.mark.django_db
def test_trading_accounts_count_trade_cash_flows(alice):
    """A buy is cash leaving the investment account for a holding its balance counts; a bank
    account has no trades."""
    from tests.factories import TransactionFactory

    broker = alice.account(account_type=Account.Type.INVESTMENT)
    bank = alice.account()
    for account in (broker, bank):
        TransactionFactory(account=account, amount=Decimal("-500"), date=dt.date(2024, 1, 1))
        account_balances_refresh(account_dates={account.pk: None})
    r = alice.client.post(
        "/api/v1/trades",
        {
            "trade": {
                "account_id": str(broker.id),
                "date": "2024-01-02",
                "ticker": "VTI",
                "qty": 1,
                "price": 200,
            }
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    broker.refresh_from_db()
    bank.refresh_from_db()
    # cash 500 - 200 = 300, plus 1 VTI at 200
    assert (broker.balance, broker.holdings_value) == (Decimal("500"), Decimal("200"))
    assert (bank.balance, bank.holdings_value) == (Decimal("500"), None)


@pytest.mark.django_db
def test_a_bulk_over_many_accounts_derives_each_series_as_one_account_alone_would(alice):
    """GIVEN manual accounts with a stored series (one continues from a row before the new
    days, one has only its opening row before them) and one without any, WHEN a bulk create
    adds rows on more days than move in place to all of them at once, THEN each account's
    series and balance equal its own derivation from scratch."""
    old = alice.account()
    opening_only = alice.account(account_type=Account.Type.CREDIT_CARD)
    fresh = alice.account()
    post(alice, old, "2024-01-01", "100.5")
    post(alice, old, "2024-01-03", "-3")
    post(alice, opening_only, "2024-02-01", "40")
    items = [
        {"account_id": str(account.id), "date": f"2024-{month:02d}-{day:02d}", "name": "b",
         "amount": f"{sign * (month * 31 + day)}.25"}
        for account, sign in ((old, 1), (opening_only, -1), (fresh, 1))
        for month in (2, 3)
        for day in range(1, 12)
    ]  # fmt: skip
    r = alice.client.post("/api/v1/transactions/bulk", {"transactions": items}, format="json")
    assert r.json()["summary"]["created"] == len(items)
    for account in (old, opening_only, fresh):
        derived = list(
            AccountBalance.objects.filter(account=account).values_list("date", "balance")
        )
        balance = Account.objects.get(pk=account.pk).balance
        account_balances_refresh(account_dates={account.pk: None})
        rebuilt = list(
            AccountBalance.objects.filter(account=account).values_list("date", "balance")
        )
        assert derived == rebuilt
        assert balance == Account.objects.get(pk=account.pk).balance == rebuilt[-1][1]
