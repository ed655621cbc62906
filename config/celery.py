"""The Celery application. The beat schedule is defined once, in `config.schedule`."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("finance")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_finalize.connect
def _install_schedule(sender: Celery, **_: object) -> None:
    from config.schedule import beat_schedule

    sender.conf.beat_schedule = beat_schedule()


@worker_process_init.connect
def _heap_freeze(**_: object) -> None:
    """Each worker process, once forked, moves what is loaded out of the collector's reach,
    as a web worker does (config/warmup.py): a sync's or an import's full collections then
    walk their own objects, not every module's."""
    from config.warmup import heap_freeze

    heap_freeze()
