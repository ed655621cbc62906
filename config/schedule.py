"""The beat schedule, in one place: a human name, a crontab, an env override and `expires`."""

from __future__ import annotations


def beat_schedule() -> dict[str, dict]:
    schedule: dict[str, dict] = {}
    from celery.schedules import crontab

    schedule["settle stuck imports"] = {
        "task": "imports.settle_stuck",
        "schedule": crontab(minute="*/5"),
        "options": {"expires": 240},
    }
    return schedule
