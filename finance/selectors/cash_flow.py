"""Cash flow in one currency per period (month, week or day) and per category.

Counted: the household's transactions of the period that are spending or income: not
excluded, of kind `standard` or `one_time`, and not a leg of a transfer (money moving between
the household's own accounts is neither). Income (ledger amount below zero) and expense (above
zero) are positive numbers. Each day's sums are converted at that day's rate; a day and
currency without a usable rate is left out and named in `missing_rates`."""

from __future__ import annotations

import bisect
import calendar
import datetime as dt
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

from django.db.models import Q

from core.exact import ExactSum
from finance.models import Category, Family, Transaction
from finance.money import minor_unit
from finance.selectors.exchange_rates import PRECISION, Rates

ZERO = Decimal(0)
INTERVALS = ("month", "week", "day")
COUNTED_KINDS = (Transaction.Kind.STANDARD, Transaction.Kind.ONE_TIME)
UNCATEGORISED = "Uncategorised"


@dataclass
class CategoryFlow:
    category_id: uuid.UUID | None
    name: str
    income: Decimal = ZERO
    expense: Decimal = ZERO


@dataclass
class Period:
    start_date: dt.date
    end_date: dt.date
    income: Decimal = ZERO
    expense: Decimal = ZERO
    categories: dict[uuid.UUID | None, CategoryFlow] = field(default_factory=dict)

    @property
    def net(self) -> Decimal:
        return self.income - self.expense

    def sorted_categories(self) -> list[CategoryFlow]:
        """Named categories by name, then the uncategorised."""
        return sorted(
            self.categories.values(),
            key=lambda c: (c.category_id is None, c.name.lower(), str(c.category_id)),
        )


@dataclass
class CashFlow:
    currency: str
    periods: list[Period]
    missing_rates: list[tuple[str, dt.date]]


def periods_between(start: dt.date, end: dt.date, interval: str) -> list[tuple[dt.date, dt.date]]:
    """Calendar months, ISO weeks (Monday to Sunday) or days covering [start, end]; the first
    and last are cut to the range."""
    out = []
    day = start
    while day <= end:
        if interval == "month":
            last = day.replace(day=calendar.monthrange(day.year, day.month)[1])
        elif interval == "week":
            last = day + dt.timedelta(days=6 - day.weekday())
        else:
            last = day
        last = min(last, end)
        out.append((day, last))
        day = last + dt.timedelta(days=1)
    return out


def period_count(start: dt.date, end: dt.date, interval: str) -> int:
    if interval == "day":
        return (end - start).days + 1
    if interval == "week":
        first_monday = start - dt.timedelta(days=start.weekday())
        return (end - first_monday).days // 7 + 1
    return (end.year - start.year) * 12 + end.month - start.month + 1


Key = tuple[dt.date, str, uuid.UUID | None]


def _daily_sums(*, family: Family, start: dt.date, end: dt.date) -> dict[Key, list[Decimal]]:
    """[income, expense] per (day, currency, category)."""
    rows = Transaction.objects.filter(
        family=family,
        date__gte=start,
        date__lte=end,
        excluded=False,
        kind__in=COUNTED_KINDS,
        transfer_as_inflow__isnull=True,
        transfer_as_outflow__isnull=True,
    ).order_by()
    sums: dict[Key, list[Decimal]] = defaultdict(lambda: [ZERO, ZERO])
    # Exact on both databases (core/exact.py); money in is below zero, the figure positive.
    grouped = rows.values("date", "currency", "category_id").annotate(
        money_in=ExactSum("amount", filter=Q(amount__lt=0)),
        money_out=ExactSum("amount", filter=Q(amount__gt=0)),
    )
    for row in grouped:
        key = (row["date"], row["currency"], row["category_id"])
        sums[key] = [-(row["money_in"] or ZERO), row["money_out"] or ZERO]
    return sums


def cash_flow(
    *, family: Family, start: dt.date, end: dt.date, interval: str, currency: str
) -> CashFlow:
    unit = minor_unit(currency)
    zero = ZERO.quantize(unit)
    # Every figure is rounded to the currency's minor unit, so the sums are too.
    bounds = periods_between(start, end, interval)
    periods = [Period(a, b, zero, zero) for a, b in bounds]
    starts = [a for a, _ in bounds]
    sums = _daily_sums(family=family, start=start, end=end)
    rates = Rates(
        family=family,
        target=currency,
        currencies={c for _, c, _ in sums},
        start=start,
        end=end,
    )
    names = dict(
        Category.objects.filter(
            family=family, pk__in={c for _, _, c in sums if c is not None}
        ).values_list("pk", "name")
    )
    missing: dict[str, dt.date] = {}
    with localcontext(prec=PRECISION):
        for (day, from_currency, category_id), (income, expense) in sorted(
            sums.items(), key=lambda item: (item[0][0], item[0][1], str(item[0][2]))
        ):
            if not income and not expense:
                continue
            factor = rates.factor(from_currency, day)
            if factor is None:
                missing[from_currency] = max(day, missing.get(from_currency, day))
                continue
            income_in = (income * factor).quantize(unit, rounding=ROUND_HALF_EVEN)
            expense_in = (expense * factor).quantize(unit, rounding=ROUND_HALF_EVEN)
            period = periods[bisect.bisect_right(starts, day) - 1]
            flow = period.categories.get(category_id)
            if flow is None:
                name = names.get(category_id, UNCATEGORISED) if category_id else UNCATEGORISED
                flow = CategoryFlow(category_id, name, zero, zero)
                period.categories[category_id] = flow
            flow.income += income_in
            flow.expense += expense_in
            period.income += income_in
            period.expense += expense_in
    return CashFlow(currency, periods, sorted(missing.items()))
