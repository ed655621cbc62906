"""Reads of securities, trades and holdings: filtered, ordered, N+1-free."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from core.filters import QueryFilters
from finance.models import Family
from trades.models import Holding, Security, SecurityPrice, Trade
from trades.services.securities import securities_visible


def security_list(*, family: Family, params: Any) -> QuerySet[Security]:
    f = QueryFilters(params)
    search = f.text("search")
    ticker = f.text("ticker", max_length=64)
    f.check()
    qs = securities_visible(family=family)
    if search:
        qs = qs.filter(Q(ticker__icontains=search) | Q(name__icontains=search))
    if ticker:
        symbol, _, mic = ticker.strip().upper().partition("|")
        qs = qs.filter(ticker=symbol.strip())
        if mic:
            qs = qs.filter(exchange_mic=mic.strip())
    return qs.order_by("ticker", "exchange_mic", "id")


def trade_base_queryset(*, family: Family) -> QuerySet[Trade]:
    return Trade.objects.filter(family=family).select_related("account", "security", "category")


def trade_list(*, family: Family, params: Any) -> QuerySet[Trade]:
    f = QueryFilters(params)
    account_id = f.uuid("account_id")
    security_id = f.uuid("security_id")
    start_date, end_date = f.date_range()
    f.check()
    qs = trade_base_queryset(family=family)
    if account_id:
        qs = qs.filter(account_id=account_id)
    if security_id:
        qs = qs.filter(security_id=security_id)
    if start_date:
        qs = qs.filter(date__gte=start_date)
    if end_date:
        qs = qs.filter(date__lte=end_date)
    return qs.order_by("-date", "-created_at", "-id")


def holding_base_queryset(*, family: Family) -> QuerySet[Holding]:
    return Holding.objects.filter(family=family).select_related("account", "security")


def holding_list(*, family: Family, params: Any) -> QuerySet[Holding]:
    f = QueryFilters(params)
    account_id = f.uuid("account_id")
    f.check()
    qs = holding_base_queryset(family=family)
    if account_id:
        qs = qs.filter(account_id=account_id)
    return qs.order_by("account__name", "account_id", "security__ticker", "id")


def security_price_base_queryset(*, family: Family) -> QuerySet[SecurityPrice]:
    return SecurityPrice.objects.filter(family=family).select_related("security")


def security_price_list(*, family: Family, params: Any) -> QuerySet[SecurityPrice]:
    """The household's price points, newest day first (then ticker, currency, source)."""
    f = QueryFilters(params)
    security_id = f.uuid("security_id")
    start_date, end_date = f.date_range()
    f.check()
    qs = security_price_base_queryset(family=family)
    if security_id:
        qs = qs.filter(security_id=security_id)
    if start_date:
        qs = qs.filter(date__gte=start_date)
    if end_date:
        qs = qs.filter(date__lte=end_date)
    return qs.order_by("-date", "security__ticker", "security_id", "currency", "source", "id")
