"""`manage.py ledger_check [--household EMAIL] [--fix]` (decisions.md, "Bounds")."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from finance.models import Account, AccountBalance, TransactionCount


def check(*args: str) -> str:
    out = StringIO()
    call_command("ledger_check", *args, stdout=out)
    return out.getvalue()


def post(household, account, date, amount):
    r = household.client.post(
        "/api/v1/transactions",
        {
            "transaction": {
                "account_id": str(account.id),
                "date": date,
                "amount": amount,
                "name": "x",
            }
        },
        format="json",
    )
    assert r.status_code == 201


@pytest.mark.django_db
def test_a_healthy_ledger_has_no_differences(alice, charlie):
    account = alice.account()
    post(alice, account, "2024-05-01", "-100")
    post(alice, account, "2024-05-03", "40")
    assert "0 difference(s)" in check()
    assert "0 difference(s)" in check("--household", "alice@example.com")


@pytest.mark.django_db
def test_damage_is_reported_then_repaired(alice):
    account = alice.account()
    post(alice, account, "2024-05-01", "-100")
    post(alice, account, "2024-05-03", "40")
    AccountBalance.objects.filter(account=account, date=dt.date(2024, 5, 3)).update(
        balance=Decimal("1")
    )
    Account.objects.filter(pk=account.pk).update(balance=Decimal("2"))
    TransactionCount.objects.filter(family=alice.family).update(row_count=7)
    with pytest.raises(CommandError, match="difference"):
        check("--household", "alice@example.com")
    # the check changed nothing
    assert Account.objects.get(pk=account.pk).balance == Decimal("2")
    out = check("--household", "alice@example.com", "--fix")
    assert "balance series differs" in out and "balance 2" in out and "row counters" in out
    assert Account.objects.get(pk=account.pk).balance == Decimal("60")
    assert "0 difference(s)" in check()


@pytest.mark.django_db
def test_an_older_dense_series_is_not_a_difference(alice):
    """A series stored one row per day (before sparse storage) means the same balances."""
    account = alice.account()
    post(alice, account, "2024-05-01", "-100")
    AccountBalance.objects.create(
        account=account, date=dt.date(2024, 5, 2), balance=Decimal("100"), currency="USD"
    )
    assert "0 difference(s)" in check()


@pytest.mark.django_db
def test_unknown_household_is_an_error():
    with pytest.raises(CommandError, match="No household"):
        check("--household", "nobody@example.com")
