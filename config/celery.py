"""The Celery application. The beat schedule is defined once, in `config.schedule`."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("finance")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_finalize.connect
def _install_schedule(sender: Celery, **_: object) -> None:
    from config.schedule import beat_schedule

    sender.conf.beat_schedule = beat_schedule()
