"""System exchange rates from the European Central Bank (decisions.md, "Exchange rates")."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Max

from finance.fx.services import EURO, system_rates_upsert
from finance.models import ExchangeRate
from providers.ecb.client import EcbRates


@dataclass
class FetchResult:
    file: str
    days: int
    added: int
    changed: int
    unchanged: int
    skipped: int
    notes: list[str]

    def summary(self) -> str:
        text = (
            f"{self.file}: {self.days} days, {self.added} rates added, {self.changed} changed, "
            f"{self.unchanged} unchanged"
        )
        if self.skipped:
            text += f", {self.skipped} skipped ({'; '.join(self.notes[:3])})"
        return text


def _weekdays_between(after: dt.date, before: dt.date) -> int:
    """Monday-to-Friday days strictly between two dates."""
    count, day = 0, after + dt.timedelta(days=1)
    while day < before:
        count += day.weekday() < 5
        day += dt.timedelta(days=1)
    return count


def ecb_file_to_fetch(*, history: bool, today: dt.date | None = None) -> str:
    """The history file when asked; the daily file when the stored rates reach the previous
    working day; otherwise the 90-day file, which fills a gap (a failed fetch, a new install)
    that the daily file, holding one day, would leave."""
    if history:
        return EcbRates.HISTORY
    today = today or dt.date.today()
    newest = ExchangeRate.objects.filter(
        family__isnull=True, from_currency=EURO, source=ExchangeRate.SOURCE_ECB
    ).aggregate(newest=Max("date"))["newest"]
    if newest is None or _weekdays_between(newest, today) > 0:
        return EcbRates.NINETY_DAYS
    return EcbRates.DAILY


def exchange_rates_fetch(*, history: bool = False, client: EcbRates | None = None) -> FetchResult:
    """Fetch one ECB file and store its rates as system rates. Raises ProviderError when the
    ECB cannot be reached or its file cannot be read (rates of whole days read before a file
    turned out to be cut short are kept: each is valid on its own)."""
    client = client or EcbRates()
    file = ecb_file_to_fetch(history=history)
    counts = system_rates_upsert(days=client.days(file), source=ExchangeRate.SOURCE_ECB)
    return FetchResult(
        file=file,
        days=counts.days,
        added=counts.added,
        changed=counts.changed,
        unchanged=counts.unchanged,
        skipped=client.notes.skipped,
        notes=client.notes.reasons,
    )
