"""The pure SimpleFIN rules: date windows of at most 60 days and the daily request budget."""

from __future__ import annotations

import datetime as dt
import itertools

from providers.simplefin.windows import (
    MAX_WINDOW_DAYS,
    budget_exhausted_message,
    request_budget,
    sync_windows,
)

NOW = dt.datetime(2026, 11, 22, 6, 0, tzinfo=dt.UTC)


def test_a_year_is_cut_into_contiguous_windows_of_at_most_60_days() -> None:
    start = NOW - dt.timedelta(days=365)
    windows = sync_windows(start, NOW)
    assert len(windows) == 7
    assert windows[0][0] == start and windows[-1][1] == NOW
    for (_, end), (next_start, _) in itertools.pairwise(windows):
        assert end == next_start  # end exclusive, next start inclusive: no gap, no overlap
    assert all(b - a <= dt.timedelta(days=MAX_WINDOW_DAYS) for a, b in windows)


def test_short_and_empty_ranges() -> None:
    assert sync_windows(NOW - dt.timedelta(days=3), NOW) == [(NOW - dt.timedelta(days=3), NOW)]
    assert sync_windows(NOW, NOW) == []
    exactly = sync_windows(NOW - dt.timedelta(days=60), NOW)
    assert len(exactly) == 1


def test_budget_counts_within_a_day_and_resets_after(settings) -> None:
    settings.SIMPLEFIN_DAILY_REQUEST_LIMIT = 24
    fresh = request_budget(window_started_at=None, used=0, now=NOW)
    assert fresh.remaining == 24 and fresh.allows(24) and not fresh.allows(25)
    spent = fresh.spend(20, now=NOW)
    assert spent.window_started_at == NOW and spent.used == 20

    later = request_budget(window_started_at=NOW, used=20, now=NOW + dt.timedelta(hours=23))
    assert later.remaining == 4 and later.allows(4) and not later.allows(5)
    assert later.seconds_until_reset(now=NOW + dt.timedelta(hours=23)) == 3600
    assert "has 4 of 24 left" in budget_exhausted_message(later, now=NOW, needed=5)

    next_day = request_budget(window_started_at=NOW, used=24, now=NOW + dt.timedelta(days=1))
    assert next_day.remaining == 24 and next_day.window_started_at is None


def test_budget_limit_is_configurable(settings) -> None:
    settings.SIMPLEFIN_DAILY_REQUEST_LIMIT = 2
    budget = request_budget(window_started_at=NOW, used=2, now=NOW)
    assert not budget.allows(1) and budget.remaining == 0


def test_budget_message_says_what_is_missing(settings) -> None:
    settings.SIMPLEFIN_DAILY_REQUEST_LIMIT = 24
    budget = request_budget(window_started_at=NOW, used=20, now=NOW)
    message = budget_exhausted_message(budget, now=NOW, needed=7)
    assert "needs 7 requests and has 4 of 24 left today" in message
