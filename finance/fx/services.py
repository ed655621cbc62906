"""Writes of the rate table: a household's own rate, and the system's rates in bulk."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from itertools import islice
from typing import TYPE_CHECKING, TypeVar

from django.db import transaction
from django.utils import timezone

from finance.models import ExchangeRate, Family

if TYPE_CHECKING:
    from providers.ecb.parsing import EcbDay

T = TypeVar("T")
EURO = "EUR"
DAYS_PER_CHUNK = 250  # ~8,000 rates: one read of what is stored, one insert, in one commit


def exchange_rate_set(
    *, family: Family, date: dt.date, from_currency: str, to_currency: str, rate: Decimal
) -> tuple[ExchangeRate, bool]:
    """The household's own rate for a day and pair: created, or the stored one's rate replaced.
    Returns (rate, created)."""
    return ExchangeRate.objects.update_or_create(
        family=family,
        date=date,
        from_currency=from_currency,
        to_currency=to_currency,
        defaults={"rate": rate, "source": ExchangeRate.SOURCE_HOUSEHOLD},
    )


@dataclass
class UpsertCounts:
    days: int = 0
    added: int = 0
    changed: int = 0
    unchanged: int = 0


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def system_rates_upsert(*, days: Iterable[EcbDay], source: str) -> UpsertCounts:
    """Store euro reference rates (1 EUR = rate X) as system rates: new ones added, corrected
    ones replaced, the rest untouched, so fetching a file again writes nothing.

    Days are consumed as they come (a history file streams ~7,000 of them); each chunk is one
    commit, so a concurrent fetch or a file cut short leaves only whole, valid days."""
    counts = UpsertCounts()
    for chunk in _chunks(days, DAYS_PER_CHUNK):
        counts.days += len(chunk)
        stored = {
            (day, currency): rate
            for day, currency, rate in ExchangeRate.objects.filter(
                family__isnull=True, from_currency=EURO, date__in=[d.date for d in chunk]
            ).values_list("date", "to_currency", "rate")
        }
        new: list[ExchangeRate] = []
        changed: list[tuple[dt.date, str, Decimal]] = []
        for day in chunk:
            for currency, rate in day.rates.items():
                old = stored.get((day.date, currency))
                if old is None:
                    new.append(
                        ExchangeRate(
                            family=None,
                            date=day.date,
                            from_currency=EURO,
                            to_currency=currency,
                            rate=rate,
                            source=source,
                        )
                    )
                elif old != rate:
                    changed.append((day.date, currency, rate))
                else:
                    counts.unchanged += 1
        with transaction.atomic():
            # A racing fetch may add the same rows first: those are skipped, not an error.
            ExchangeRate.objects.bulk_create(new, batch_size=1000, ignore_conflicts=True)
            now = timezone.now()
            for day, currency, rate in changed:
                ExchangeRate.objects.filter(
                    family__isnull=True, from_currency=EURO, to_currency=currency, date=day
                ).update(rate=rate, source=source, updated_at=now)
        counts.added += len(new)
        counts.changed += len(changed)
    return counts
