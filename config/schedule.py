"""The beat schedule, in one place: a human name, a crontab, an env override and `expires`."""

from __future__ import annotations


def beat_schedule() -> dict[str, dict]:
    schedule: dict[str, dict] = {}
    return schedule
