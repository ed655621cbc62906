"""The beat schedule, in one place: a human name, a crontab, an env override and `expires`.

- "Sync every provider connection": daily at SYNC_SCHEDULE_HOUR:SYNC_SCHEDULE_MINUTE in
  SYNC_SCHEDULE_TIMEZONE; SYNC_SCHEDULE_CRON (five crontab fields, e.g. "*/5 * * * *") or
  SYNC_INTERVAL_SECONDS (e.g. 30, for demos) replace it.
- "Settle stuck syncs": every SYNC_SETTLE_INTERVAL_SECONDS (default 300).
- "Settle stuck imports": every 5 minutes.
- "Tidy transaction counters" (finance/row_counts.py): every 15 minutes.
- "Fetch exchange rates" (the European Central Bank's, finance/fx/fetch.py): daily at
  FX_SCHEDULE_HOUR:FX_SCHEDULE_MINUTE in Europe/Berlin (the ECB publishes around 16:00 CET on
  working days), when FX_PROVIDER=ecb.
- "Delete expired exports" (exports/services.py): hourly; archives older than
  EXPORT_RETENTION_HOURS (default 72) go."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from celery.schedules import crontab, schedule
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def _sync_schedule() -> tuple[schedule, float]:
    if settings.SYNC_INTERVAL_SECONDS:
        seconds = float(settings.SYNC_INTERVAL_SECONDS)
        return schedule(run_every=seconds), max(seconds, 30.0)
    if settings.SYNC_SCHEDULE_CRON:
        fields = settings.SYNC_SCHEDULE_CRON.split()
        if len(fields) != 5:
            raise ImproperlyConfigured("SYNC_SCHEDULE_CRON: expected five crontab fields")
        minute, hour, day_of_month, month_of_year, day_of_week = fields
        cron = crontab(
            minute=minute,
            hour=hour,
            day_of_month=day_of_month,
            month_of_year=month_of_year,
            day_of_week=day_of_week,
        )
    else:
        cron = crontab(minute=settings.SYNC_SCHEDULE_MINUTE, hour=settings.SYNC_SCHEDULE_HOUR)
    cron.tz = ZoneInfo(settings.SYNC_SCHEDULE_TIMEZONE)
    return cron, 3600.0


def beat_schedule() -> dict[str, dict]:
    sync_every, sync_expires = _sync_schedule()
    settle_every = float(settings.SYNC_SETTLE_INTERVAL_SECONDS)
    schedule_: dict[str, dict] = {
        "Sync every provider connection": {
            "task": "providers.sync_all",
            "schedule": sync_every,
            "options": {"expires": sync_expires},
        },
        "Settle stuck syncs": {
            "task": "providers.settle_syncs",
            "schedule": schedule(run_every=settle_every),
            "options": {"expires": settle_every},
        },
        "Settle stuck imports": {
            "task": "imports.settle_stuck",
            "schedule": crontab(minute="*/5"),
            "options": {"expires": 240},
        },
        "Delete expired exports": {
            "task": "exports.expire",
            "schedule": crontab(minute=17),
            "options": {"expires": 3000},
        },
        "Tidy transaction counters": {
            "task": "finance.tidy_row_counts",
            "schedule": crontab(minute="*/15"),
            "options": {"expires": 600},
        },
    }
    if settings.FX_PROVIDER == "ecb":
        fx_every = crontab(minute=settings.FX_SCHEDULE_MINUTE, hour=settings.FX_SCHEDULE_HOUR)
        fx_every.tz = ZoneInfo("Europe/Berlin")
        schedule_["Fetch exchange rates"] = {
            "task": "finance.fetch_exchange_rates",
            "schedule": fx_every,
            "options": {"expires": 3600},
        }
    return schedule_
