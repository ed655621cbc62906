"""Exchange rates (list, household's own rate), net worth and cash flow."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal, localcontext
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.bounds import date_problem
from finance.api.errors import ValidationFailed
from finance.api.filters import QueryFilters
from finance.api.throttling import rate_limit_headers
from finance.api.viewsets import FamilyViewSet
from finance.currencies import is_currency
from finance.fx.bounds import DATE_RANGE_MESSAGE
from finance.fx.services import exchange_rate_set
from finance.models import ExchangeRate, Family
from finance.money import format_amount
from finance.selectors.cash_flow import INTERVALS, cash_flow, period_count
from finance.selectors.dashboard import family_today
from finance.selectors.exchange_rates import PRECISION, exchange_rate_list
from finance.selectors.net_worth import net_worth
from finance.serializers.fx import (
    CashFlowSerializer,
    ExchangeRateCreateRequestSerializer,
    ExchangeRateSerializer,
    NetWorthSerializer,
)

DEFAULT_NET_WORTH_DAYS = 30
DEFAULT_CASH_FLOW_MONTHS = 12
# One point per day (net worth) or period (cash flow), at most about 40 years of days.
MAX_POINTS = 14_610

_CURRENCY = OpenApiParameter(
    "currency", str, description="ISO 4217 code; default the household's currency"
)


def _date_params(default: str) -> list[OpenApiParameter]:
    return [
        OpenApiParameter("start_date", str, description=f"YYYY-MM-DD; default {default}"),
        OpenApiParameter("end_date", str, description="YYYY-MM-DD; default today"),
    ]


def currency_param(f: QueryFilters, name: str) -> str | None:
    """An ISO 4217 code in the query string, in any case; returned upper case."""
    raw = f.params.get(name)
    if raw in (None, ""):
        return None
    code = str(raw).strip().upper()
    if not is_currency(code):
        f.errors.append(f"{name}: {str(raw)[:20]!r} is not an ISO 4217 currency code")
        return None
    return code


class ExchangeRateViewSet(FamilyViewSet):
    serializer_class = ExchangeRateSerializer
    results_key = "exchange_rates"

    def get_queryset(self) -> QuerySet[ExchangeRate]:
        return exchange_rate_list(family=self.family)

    @extend_schema(
        parameters=[
            OpenApiParameter("from_currency", str, description="ISO 4217 code"),
            OpenApiParameter("to_currency", str, description="ISO 4217 code"),
            OpenApiParameter("start_date", str, description="YYYY-MM-DD, inclusive"),
            OpenApiParameter("end_date", str, description="YYYY-MM-DD, inclusive"),
        ],
        responses=ExchangeRateSerializer(many=True),
        summary="List exchange rates",
        description=(
            "The household's own exchange rates and the system's (the European Central Bank's "
            "euro reference rates), newest first, filtered by currency pair and date range. "
            "Each rate says where it came from in `source`."
        ),
    )
    def list(self, request: Request) -> Response:
        """The household's own rates and the system's (European Central Bank), newest first."""
        f = QueryFilters(request.query_params)
        from_currency = currency_param(f, "from_currency")
        to_currency = currency_param(f, "to_currency")
        start_date, end_date = f.date_range()
        f.check()
        return self.paginated(
            exchange_rate_list(
                family=self.family,
                from_currency=from_currency,
                to_currency=to_currency,
                start_date=start_date,
                end_date=end_date,
            )
        )

    @extend_schema(
        request=ExchangeRateCreateRequestSerializer,
        responses={201: ExchangeRateSerializer, 200: ExchangeRateSerializer},
        summary="Set the household's own exchange rate",
        description=(
            "Stores the household's rate for a day and currency pair (201), or replaces the one "
            "it already had for that day and pair (200). Conversions prefer a household's own "
            "rate over the system's."
        ),
    )
    def create(self, request: Request) -> Response:
        """The household's own rate for a day and pair (201), or its new value when the
        household already had one for that day and pair (200). Conversions prefer it."""
        body = ExchangeRateCreateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        rate, created = exchange_rate_set(
            family=self.family, **body.validated_data["exchange_rate"]
        )
        return Response(
            ExchangeRateSerializer(rate).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class FamilyReportView(APIView):
    """A read over the caller's household, answered with the API's rate-limit headers."""

    @property
    def family(self) -> Family:
        return self.request.user.family

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        for name, value in rate_limit_headers(request).items():
            response[name] = value
        return response

    def range_and_currency(
        self, f: QueryFilters, default_start: Any
    ) -> tuple[dt.date, dt.date, str]:
        """start_date, end_date (default today in the household's time zone) and currency
        (default the household's), all checked: errors name each bad parameter."""
        start, end = f.date_range()
        currency = currency_param(f, "currency")
        for name, value in (("start_date", start), ("end_date", end)):
            if value is not None and date_problem(value):
                f.errors.append(f"{name}: {DATE_RANGE_MESSAGE}")
        f.check()
        today = family_today(self.family)
        end = end or max(today, start or today)
        start = start or default_start(end)
        return start, end, currency or self.family.currency


def _fmt(value: Any, currency: str) -> str:
    with localcontext(prec=PRECISION):
        return format_amount(value, currency)


def _total(value: Decimal) -> str:
    """A report's figure, already rounded to the currency's minor unit by the selector (no
    rounding per figure: a ten-year series has 11,000 of them)."""
    return f"{value if value else abs(value):f}"  # never "-0.00"


def _missing(items: list[tuple[str, dt.date]]) -> list[dict[str, str]]:
    return [{"currency": c, "date": d.isoformat()} for c, d in items]


class NetWorthView(FamilyReportView):
    @extend_schema(
        parameters=[*_date_params("30 days before end_date"), _CURRENCY],
        responses=NetWorthSerializer,
        summary="Net worth over time in one currency",
        description=(
            "Assets, liabilities and net worth for each day of the range, every account "
            "converted into one currency (default: the household's). Accounts without a usable "
            "rate are left out of the totals and named in `missing_rates`, never counted 1:1."
        ),
    )
    def get(self, request: Request) -> Response:
        """Assets, liabilities and net worth for each day, converted into one currency; each
        account's balance on end_date beside it converted. Accounts without a usable rate are
        left out of the totals and their currency is named in missing_rates."""
        f = QueryFilters(request.query_params)
        start, end, currency = self.range_and_currency(
            f, lambda end: end - dt.timedelta(days=DEFAULT_NET_WORTH_DAYS - 1)
        )
        if (end - start).days + 1 > MAX_POINTS:
            raise ValidationFailed([f"start_date: the range is at most {MAX_POINTS} days"])
        report = net_worth(family=self.family, start=start, end=end, currency=currency)
        return Response(
            {
                "currency": currency,
                "series": [
                    {
                        "date": day.date.isoformat(),
                        "assets": _total(day.assets),
                        "liabilities": _total(day.liabilities),
                        "net_worth": _total(day.net_worth),
                    }
                    for day in report.series
                ],
                "accounts": [
                    {
                        "id": str(worth.account.pk),
                        "name": worth.account.name,
                        "currency": worth.account.currency,
                        "balance": _fmt(worth.balance, worth.account.currency),
                        "converted_balance": None
                        if worth.converted_balance is None
                        else _total(worth.converted_balance),
                    }
                    for worth in report.accounts
                ],
                "missing_rates": _missing(report.missing_rates),
            }
        )


def _months_back(end: dt.date) -> dt.date:
    """The first day of the month DEFAULT_CASH_FLOW_MONTHS - 1 months before end's."""
    months = end.year * 12 + end.month - 1 - (DEFAULT_CASH_FLOW_MONTHS - 1)
    return dt.date(months // 12, months % 12 + 1, 1)


class CashFlowView(FamilyReportView):
    @extend_schema(
        parameters=[
            *_date_params("the first day of the month 11 months before end_date"),
            OpenApiParameter("interval", str, enum=list(INTERVALS), description="default month"),
            _CURRENCY,
        ],
        responses=CashFlowSerializer,
        summary="Income and spending per period and category",
        description=(
            "Income and expense (both positive) per month, week or day and per category, "
            "converted into one currency. Transfers between the household's accounts and "
            "excluded transactions are left out; currencies without a rate are named in "
            "`missing_rates`."
        ),
    )
    def get(self, request: Request) -> Response:
        """Income and expense (positive numbers) and their net per period and per category,
        converted into one currency. Transfers between the household's accounts and excluded
        transactions are left out."""
        f = QueryFilters(request.query_params)
        interval = f.choice("interval", INTERVALS) or "month"
        start, end, currency = self.range_and_currency(f, _months_back)
        if period_count(start, end, interval) > MAX_POINTS:
            raise ValidationFailed(
                [f"start_date: the range is at most {MAX_POINTS} periods of a {interval}"]
            )
        report = cash_flow(
            family=self.family, start=start, end=end, interval=interval, currency=currency
        )
        return Response(
            {
                "currency": currency,
                "periods": [
                    {
                        "start_date": period.start_date.isoformat(),
                        "end_date": period.end_date.isoformat(),
                        "income": _total(period.income),
                        "expense": _total(period.expense),
                        "net": _total(period.net),
                        "categories": [
                            {
                                "category_id": None
                                if c.category_id is None
                                else str(c.category_id),
                                "name": c.name,
                                "income": _total(c.income),
                                "expense": _total(c.expense),
                            }
                            for c in period.sorted_categories()
                        ],
                    }
                    for period in report.periods
                ],
                "missing_rates": _missing(report.missing_rates),
            }
        )
