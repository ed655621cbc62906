"""Reads of securities, trades and holdings: filtered, ordered, N+1-free."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from core.filters import query_param
from finance.models import Family
from trades.models import Holding, Security, SecurityPrice, Trade
from trades.services.securities import securities_visible


@dataclass(frozen=True)
class SecurityFilters:
    search: str | None = query_param("text", description="part of the ticker or name")
    ticker: str | None = query_param(
        "text", max_length=64, description="exact ticker, optionally TICKER|MIC"
    )


def security_list(*, family: Family, filters: SecurityFilters) -> QuerySet[Security]:
    search, ticker = filters.search, filters.ticker
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


@dataclass(frozen=True)
class TradeFilters:
    account_id: uuid.UUID | None = query_param("uuid", description="uuid")
    security_id: uuid.UUID | None = query_param("uuid", description="uuid")
    start_date: dt.date | None = query_param("date", description="YYYY-MM-DD, inclusive")
    end_date: dt.date | None = query_param(
        "date", not_before="start_date", description="YYYY-MM-DD, inclusive"
    )


def trade_list(*, family: Family, filters: TradeFilters) -> QuerySet[Trade]:
    qs = trade_base_queryset(family=family)
    if filters.account_id:
        qs = qs.filter(account_id=filters.account_id)
    if filters.security_id:
        qs = qs.filter(security_id=filters.security_id)
    if filters.start_date:
        qs = qs.filter(date__gte=filters.start_date)
    if filters.end_date:
        qs = qs.filter(date__lte=filters.end_date)
    return qs.order_by("-date", "-created_at", "-id")


def holding_base_queryset(*, family: Family) -> QuerySet[Holding]:
    return Holding.objects.filter(family=family).select_related("account", "security")


@dataclass(frozen=True)
class HoldingFilters:
    account_id: uuid.UUID | None = query_param("uuid", description="uuid")


def holding_list(*, family: Family, filters: HoldingFilters) -> QuerySet[Holding]:
    qs = holding_base_queryset(family=family)
    if filters.account_id:
        qs = qs.filter(account_id=filters.account_id)
    return qs.order_by("account__name", "account_id", "security__ticker", "id")


def security_price_base_queryset(*, family: Family) -> QuerySet[SecurityPrice]:
    return SecurityPrice.objects.filter(family=family).select_related("security")


@dataclass(frozen=True)
class SecurityPriceFilters:
    security_id: uuid.UUID | None = query_param("uuid", description="uuid")
    start_date: dt.date | None = query_param("date", description="YYYY-MM-DD, inclusive")
    end_date: dt.date | None = query_param(
        "date", not_before="start_date", description="YYYY-MM-DD, inclusive"
    )


def security_price_list(
    *, family: Family, filters: SecurityPriceFilters
) -> QuerySet[SecurityPrice]:
    """The household's price points, newest day first (then ticker, currency, source)."""
    security_id, start_date, end_date = filters.security_id, filters.start_date, filters.end_date
    qs = security_price_base_queryset(family=family)
    if security_id:
        qs = qs.filter(security_id=security_id)
    if start_date:
        qs = qs.filter(date__gte=start_date)
    if end_date:
        qs = qs.filter(date__lte=end_date)
    return qs.order_by("-date", "security__ticker", "security_id", "currency", "source", "id")
