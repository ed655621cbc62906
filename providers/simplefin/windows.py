"""Pure rules for what a SimpleFIN sync may ask: its date windows and its daily request budget.

The SimpleFIN Bridge operator publishes about 24 requests a day per access URL and at most
about 90 days of history per request. We ask for at most 60 days per request. Where a sync
starts is the engine's rule (`ProviderAdapter.sync_window`): a first sync reads back
`SIMPLEFIN_HISTORY_DAYS`, later ones from the last good sync's end minus `SYNC_OVERLAP_DAYS`,
and back to the earliest row still pending in the ledger as far as the day's budget allows
(`SimplefinAdapter.sync_window`).
The budget is a fixed 24-hour window the engine persists as (window_started_at, used)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

from django.conf import settings

MAX_WINDOW_DAYS = 60
BUDGET_PERIOD = dt.timedelta(days=1)


def sync_windows(
    start: dt.datetime, end: dt.datetime, *, max_days: int = MAX_WINDOW_DAYS
) -> list[tuple[dt.datetime, dt.datetime]]:
    """[start, end) cut into consecutive half-open windows of at most `max_days`, oldest first.
    SimpleFIN's `start-date` is inclusive and `end-date` exclusive, so windows never overlap."""
    if max_days < 1:
        raise ValueError("max_days must be at least 1")
    step = dt.timedelta(days=max_days)
    windows: list[tuple[dt.datetime, dt.datetime]] = []
    cursor = start
    while cursor < end:
        upper = min(cursor + step, end)
        windows.append((cursor, upper))
        cursor = upper
    return windows


def epoch_seconds(moment: dt.datetime) -> int:
    """Unix seconds of an aware datetime (naive is read as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp())


@dataclass(frozen=True)
class RequestBudget:
    """Requests a connection has made in its current 24-hour window."""

    window_started_at: dt.datetime | None
    used: int
    limit: int

    @property
    def remaining(self) -> int:
        return max(self.limit - self.used, 0)

    @property
    def resets_at(self) -> dt.datetime | None:
        return self.window_started_at + BUDGET_PERIOD if self.window_started_at else None

    def allows(self, requests: int = 1) -> bool:
        return self.remaining >= requests

    def spend(self, requests: int, *, now: dt.datetime) -> RequestBudget:
        """The budget after `requests` more were sent at `now` (opens a window if none)."""
        if requests <= 0:
            return self
        started = self.window_started_at or now
        return replace(self, window_started_at=started, used=self.used + requests)

    def seconds_until_reset(self, *, now: dt.datetime) -> float:
        if self.resets_at is None:
            return 0.0
        return max((self.resets_at - now).total_seconds(), 0.0)


def request_budget(
    *,
    window_started_at: dt.datetime | None,
    used: int,
    now: dt.datetime,
    limit: int | None = None,
) -> RequestBudget:
    """The budget as it stands at `now`: a window older than a day has expired and resets."""
    limit = limit if limit is not None else settings.SIMPLEFIN_DAILY_REQUEST_LIMIT
    if window_started_at is None or now >= window_started_at + BUDGET_PERIOD:
        return RequestBudget(window_started_at=None, used=0, limit=limit)
    return RequestBudget(window_started_at=window_started_at, used=max(used, 0), limit=limit)


def budget_exhausted_message(budget: RequestBudget, *, now: dt.datetime, needed: int = 1) -> str:
    hours = max(budget.seconds_until_reset(now=now) / 3600, 0.1)
    if budget.remaining == 0:
        used = f"has used its {budget.limit} requests for the day"
    else:
        used = f"needs {needed} requests and has {budget.remaining} of {budget.limit} left today"
    return f"This SimpleFIN connection {used}; the sync can run again in about {hours:.1f} hours."
