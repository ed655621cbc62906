"""Reads behind the household dashboard: net worth over time, this month's spending by
category, accounts with balances, recent syncs and imports."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections import defaultdict
from decimal import Decimal
from typing import Any

from django.apps import apps
from django.db.models import Sum
from django.utils import timezone

from finance.models import Account, AccountBalance, Family, Transaction

NET_WORTH_DAYS = 180
SPENDING_KINDS = (Transaction.Kind.STANDARD, Transaction.Kind.ONE_TIME)


def family_today(family: Family) -> dt.date:
    try:
        tz = zoneinfo.ZoneInfo(family.timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        tz = dt.UTC
    return timezone.now().astimezone(tz).date()


def account_balance_series(
    *, account: Account, start: dt.date, end: dt.date
) -> list[tuple[dt.date, Decimal]]:
    """Daily balances of one account over [start, end], carried forward over days with no row."""
    rows = list(
        AccountBalance.objects.filter(account=account, date__lte=end)
        .filter(date__gte=start)
        .order_by("date")
        .values_list("date", "balance")
    )
    before = (
        AccountBalance.objects.filter(account=account, date__lt=start)
        .order_by("-date")
        .values_list("balance", flat=True)
        .first()
    )
    by_day = dict(rows)
    current = before
    out = []
    day = start
    while day <= end:
        if day in by_day:
            current = by_day[day]
        if current is not None:
            out.append((day, current))
        day += dt.timedelta(days=1)
    if not out:
        out = [(end, account.balance)]
    return out


def net_worth_series(
    *, family: Family, days: int = NET_WORTH_DAYS
) -> list[tuple[dt.date, Decimal]]:
    """Assets minus liabilities per day, over the household's accounts in its own currency."""
    end = family_today(family)
    start = end - dt.timedelta(days=days - 1)
    totals: dict[dt.date, Decimal] = defaultdict(Decimal)
    accounts = Account.objects.filter(family=family, currency=family.currency).exclude(
        status__in=[Account.Status.DISABLED, Account.Status.PENDING_DELETION]
    )
    for account in accounts:
        sign = -1 if account.classification == "liability" else 1
        for day, balance in account_balance_series(account=account, start=start, end=end):
            totals[day] += sign * balance
    return sorted(totals.items())


def spending_by_category(*, family: Family) -> list[tuple[str, Decimal]]:
    today = family_today(family)
    rows = (
        Transaction.objects.filter(
            family=family,
            currency=family.currency,
            date__gte=today.replace(day=1),
            date__lte=today,
            amount__gt=0,
            excluded=False,
            kind__in=SPENDING_KINDS,
        )
        .values("category__name")
        .annotate(total=Sum("amount"))
    )
    return [(row["category__name"] or "Uncategorised", row["total"]) for row in rows]


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
        qs = qs.filter(connection__family=family)
    else:
        return []
    order = "-created_at" if "created_at" in field_names else "-pk"
    return list(qs.order_by(order)[:limit])


def dashboard_context(*, family: Family) -> dict[str, Any]:
    accounts = list(
        Account.objects.filter(family=family)
        .exclude(status__in=[Account.Status.DISABLED, Account.Status.PENDING_DELETION])
        .order_by("account_type", "name")
    )
    return {
        "family": family,
        "accounts": accounts,
        "net_worth": net_worth_series(family=family),
        "spending": spending_by_category(family=family),
        "recent_syncs": _recent("providers", "Sync", family),
        "recent_imports": _recent("imports", "Import", family),
    }
