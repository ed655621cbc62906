"""A manual account's balance series moved in place by new flows (finance/ledger/balances.py).

A create adds flows on a few days: every stored row from each such day on moves by the flow in
one UPDATE, a row is added on a day that had none, and the opening row moves when the series
now starts earlier. The cost is a statement per new day, whatever the date: a row dated 1900
costs what a row dated today costs, where recomputing from its day would rewrite every row
after it."""

# ruff: noqa: S608 - every statement is built from model table names and constants, never input.
from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal

from django.db import connection

from finance.models import Account, AccountBalance

_ONE_DAY = dt.timedelta(days=1)
ZERO = Decimal(0)


def direction(account: Account) -> int:
    """How a ledger-signed flow moves the balance: assets go down, liabilities go up."""
    return 1 if account.classification == "liability" else -1


def series_shift(account: Account, flows: Mapping[dt.date, Decimal]) -> Decimal | None:
    """Move the series of a manual account (opening at 0) by these new ledger-signed flows per
    day. Returns the account's balance, or None when it has no series yet (the caller derives
    it whole)."""
    rows = AccountBalance.objects.filter(account=account)
    opening = rows.order_by("date").values_list("date", flat=True).first()
    if opening is None:
        return None
    table = AccountBalance._meta.db_table
    account_id = Account._meta.pk.get_db_prep_value(account.pk, connection)
    places = AccountBalance._meta.get_field("balance").decimal_places
    moved = (
        f"exact_add(balance, %s, {places})" if connection.vendor == "sqlite" else ("balance + %s")
    )
    sign = direction(account)
    with connection.cursor() as cursor:
        for day, flow in sorted(flows.items()):
            if not rows.filter(date=day).exists():
                carried = (
                    rows.filter(date__lt=day).order_by("-date").values_list("balance", flat=True)
                ).first()
                AccountBalance.objects.create(
                    account=account, date=day, balance=carried or ZERO, currency=account.currency
                )
            cursor.execute(
                f"UPDATE {table} SET balance = {moved} WHERE account_id = %s AND date >= %s",
                [sign * flow, account_id, day],
            )
        first = min(flows)
        if first <= opening:
            # The series starts earlier now: a new opening row the day before the first flow;
            # the old one, unless a flow landed on its day, only repeats the row before it.
            AccountBalance.objects.get_or_create(
                account=account,
                date=first - _ONE_DAY,
                defaults={"balance": ZERO, "currency": account.currency},
            )
            if opening not in flows:
                rows.filter(date=opening).delete()
    return rows.order_by("-date").values_list("balance", flat=True).first()
