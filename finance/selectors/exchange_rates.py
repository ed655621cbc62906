"""Reads of the rate table: the list, and conversion of whole daily series into one currency.

The rate for a day is the latest on or before it, at most STALE_DAYS old. A household's own
rate wins over the system's; a rate of the opposite direction counts as its inverse; a pair
with no rate of its own is crossed through the euro (the ECB quotes every currency against
it), each leg again preferring the household's rate. A currency is 1 of itself."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from decimal import Decimal, localcontext

from django.db.models import Q, QuerySet

from finance.models import ExchangeRate, Family

STALE_DAYS = 7
EURO = "EUR"
ONE = Decimal(1)
# Wide enough that a balance of 38 digits times a rate stays exact before it is rounded.
PRECISION = 80

Series = list[tuple[dt.date, Decimal]]
Daily = list[Decimal | None]


def exchange_rate_list(
    *,
    family: Family,
    from_currency: str | None = None,
    to_currency: str | None = None,
    start_date: dt.date | None = None,
    end_date: dt.date | None = None,
) -> QuerySet[ExchangeRate]:
    """The household's own rates and the system's, newest first."""
    qs = ExchangeRate.objects.filter(Q(family=family) | Q(family__isnull=True))
    if from_currency:
        qs = qs.filter(from_currency=from_currency)
    if to_currency:
        qs = qs.filter(to_currency=to_currency)
    if start_date:
        qs = qs.filter(date__gte=start_date)
    if end_date:
        qs = qs.filter(date__lte=end_date)
    return qs.order_by("-date", "-created_at", "-id")


def _pair_series(
    rows: Iterable[tuple[str, str, dt.date, Decimal]],
) -> dict[tuple[str, str], Series]:
    """Each pair's rates by date, both directions: a rate stored the other way round counts as
    its inverse, and on a day with both the one stored in that direction wins."""
    direct: dict[tuple[str, str], dict[dt.date, Decimal]] = defaultdict(dict)
    inverse: dict[tuple[str, str], dict[dt.date, Decimal]] = defaultdict(dict)
    for from_currency, to_currency, day, rate in rows:
        direct[(from_currency, to_currency)][day] = rate
        inverse[(to_currency, from_currency)][day] = ONE / rate
    out: dict[tuple[str, str], Series] = {}
    for pair in set(direct) | set(inverse):
        merged = {**inverse.get(pair, {}), **direct.get(pair, {})}
        out[pair] = sorted(merged.items())
    return out


def _daily(series: Series | None, start: dt.date, days: int) -> Daily:
    """The usable rate of each day: the latest on or before it, at most STALE_DAYS old."""
    out: Daily = [None] * days
    if not series:
        return out
    j, latest = 0, None
    for i in range(days):
        day = start + dt.timedelta(days=i)
        while j < len(series) and series[j][0] <= day:
            latest = series[j]
            j += 1
        if latest is not None and (day - latest[0]).days <= STALE_DAYS:
            out[i] = latest[1]
    return out


def _first(*dailies: Daily) -> Daily:
    out = list(dailies[0])
    for other in dailies[1:]:
        for i, value in enumerate(out):
            if value is None:
                out[i] = other[i]
    return out


class Rates:
    """Conversion factors from each of `currencies` into `target` for every day of
    [start, end]: two queries for the whole range, then a walk over the days."""

    def __init__(
        self,
        *,
        family: Family,
        target: str,
        currencies: Iterable[str],
        start: dt.date,
        end: dt.date,
    ) -> None:
        self.target = target
        self.start = start
        self.days = (end - start).days + 1
        wanted = {c for c in currencies if c != target}
        self._factors: dict[str, Daily] = {target: [ONE] * self.days}
        if not wanted:
            return
        codes = wanted | {target, EURO}
        loaded = ExchangeRate.objects.filter(
            date__gte=start - dt.timedelta(days=STALE_DAYS),
            date__lte=end,
            from_currency__in=codes,
            to_currency__in=codes,
        ).values_list("from_currency", "to_currency", "date", "rate")
        with localcontext(prec=PRECISION):
            # Two queries, each served by its own partial unique index.
            own = _pair_series(loaded.filter(family=family))
            system = _pair_series(loaded.filter(family__isnull=True))
            legs = {c: self._leg(c, own, system) for c in wanted | {target}}
            for currency in wanted:
                self._factors[currency] = self._factor(currency, own, system, legs)

    def _pair(
        self, pair: tuple[str, str], own: dict[tuple[str, str], Series], system: dict
    ) -> Daily:
        return _first(
            _daily(own.get(pair), self.start, self.days),
            _daily(system.get(pair), self.start, self.days),
        )

    def _leg(self, currency: str, own: dict, system: dict) -> Daily:
        """Units of `currency` for 1 EUR, each day."""
        if currency == EURO:
            return [ONE] * self.days
        return self._pair((EURO, currency), own, system)

    def _factor(self, currency: str, own: dict, system: dict, legs: dict[str, Daily]) -> Daily:
        pair = (currency, self.target)
        direct_own = _daily(own.get(pair), self.start, self.days)
        direct_system = _daily(system.get(pair), self.start, self.days)
        leg_from, leg_to = legs[currency], legs[self.target]
        crossed: Daily = [
            to / src if src is not None and to is not None else None
            for src, to in zip(leg_from, leg_to, strict=True)
        ]
        return _first(direct_own, direct_system, crossed)

    def factors(self, currency: str) -> Daily:
        """The factor of each day of the range (None: no usable rate that day)."""
        if currency not in self._factors:
            self._factors[currency] = [None] * self.days
        return self._factors[currency]

    def factor(self, currency: str, day: dt.date) -> Decimal | None:
        i = (day - self.start).days
        if not 0 <= i < self.days:
            raise ValueError(f"{day} is outside the loaded range")
        return self.factors(currency)[i]
