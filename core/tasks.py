"""Queueing background work from services without importing the tasks modules (which import
the services: the tasks are looked up by their registered names instead)."""

from __future__ import annotations

from typing import Any

from django.db import transaction


def enqueue_on_commit(name: str, *args: Any, countdown: float | None = None) -> None:
    """Send task `name` with `args` once the current database transaction commits (at once
    outside one), so a worker never reads a row its caller has not committed yet."""

    def send() -> None:
        from celery import current_app

        task = current_app.tasks[name]
        if countdown:
            task.apply_async(args, countdown=countdown)
        else:
            task.delay(*args)

    transaction.on_commit(send)
