"""Reads behind the household dashboard: net worth over time, this month's spending by
category, accounts with balances, recent syncs and imports."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal
from typing import Any

from django.apps import apps
from django.utils import timezone

from finance.ledger import account_balance_series as ledger_series
from finance.models import Account, Family
from finance.selectors.cash_flow import CashFlow, cash_flow
from finance.selectors.net_worth import NetWorth, net_worth

NET_WORTH_DAYS = 180


def family_today(family: Family) -> dt.date:
    try:
        tz = zoneinfo.ZoneInfo(family.timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        tz = dt.UTC
    return timezone.now().astimezone(tz).date()


def account_balance_series(
    *, account: Account, start: dt.date, end: dt.date
) -> list[tuple[dt.date, Decimal]]:
    """Daily balances of one account over [start, end] (the ledger's series); an account with
    no history shows its current balance on the last day."""
    return ledger_series(account=account, start_date=start, end_date=end) or [
        (end, account.balance)
    ]


def net_worth_report(*, family: Family, days: int = NET_WORTH_DAYS) -> NetWorth:
    """The last `days` days of net worth in the household's currency (selectors/net_worth.py:
    every account converted at each day's rate; those without one named, never counted 1:1)."""
    end = family_today(family)
    start = end - dt.timedelta(days=days - 1)
    return net_worth(family=family, start=start, end=end, currency=family.currency)


def spending_report(*, family: Family) -> CashFlow:
    """This month so far, in the household's currency (selectors/cash_flow.py)."""
    today = family_today(family)
    return cash_flow(
        family=family,
        start=today.replace(day=1),
        end=today,
        interval="month",
        currency=family.currency,
    )


def cash_flow_months(*, family: Family, months: int = 12) -> list[tuple[dt.date, Decimal, Decimal]]:
    """Money in and out per month over the last `months` months (this one so far), in the
    household's currency (selectors/cash_flow.py)."""
    today = family_today(family)
    index = today.year * 12 + today.month - 1 - (months - 1)
    start = dt.date(index // 12, index % 12 + 1, 1)
    report = cash_flow(
        family=family, start=start, end=today, interval="month", currency=family.currency
    )
    return [(period.start_date, period.income, period.expense) for period in report.periods]


def _recent(app_label: str, model_name: str, family: Family, limit: int = 5) -> list[Any]:
    try:
        model = apps.get_model(app_label, model_name)
    except LookupError:
        return []
    field_names = {f.name for f in model._meta.get_fields()}
    qs = model.objects.all()
    if "family" in field_names:
        qs = qs.filter(family=family)
    elif "connection" in field_names:
        # The list shows each row's connection: read it with the rows.
        qs = qs.filter(connection__family=family).select_related("connection")
    else:
        return []
    order = "-created_at" if "created_at" in field_names else "-pk"
    return list(qs.order_by(order)[:limit])


def dashboard_context(*, family: Family) -> dict[str, Any]:
    worth = net_worth_report(family=family)
    accounts = []
    for row in sorted(worth.accounts, key=lambda w: (w.account.account_type, w.account.name)):
        # In the household's currency (None: no usable rate); the page shows the original too.
        row.account.converted_balance = row.converted_balance
        accounts.append(row.account)
    spending = spending_report(family=family)
    return {
        "family": family,
        "accounts": accounts,
        "net_worth": [(day.date, day.net_worth) for day in worth.series],
        "net_worth_missing": worth.missing_rates,
        "spending": [
            (flow.name, flow.expense)
            for period in spending.periods
            for flow in period.sorted_categories()
            if flow.expense
        ],
        "spending_missing": spending.missing_rates,
        "cash_flow": cash_flow_months(family=family),
        "recent_syncs": _recent("providers", "Sync", family),
        "recent_imports": _recent("imports", "Import", family),
    }
