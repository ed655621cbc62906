"""Celery tasks: thin, take ids, call one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="imports.parse", acks_late=True)
def import_parse_task(import_id: str, publish: bool = False) -> str:
    from imports.services.parse import import_parse_run

    return import_parse_run(import_id=import_id, publish=publish)


@shared_task(name="imports.publish", acks_late=True)
def import_publish_task(import_id: str) -> str:
    from imports.services.publish import import_publish_run

    return import_publish_run(import_id=import_id)


@shared_task(name="imports.revert", acks_late=True)
def import_revert_task(import_id: str) -> str:
    from imports.services.revert import import_revert_run

    return import_revert_run(import_id=import_id)


@shared_task(name="imports.settle_stuck", expires=600)
def imports_settle_stuck_task() -> str:
    from imports.services.settle import imports_settle_stuck

    moved = imports_settle_stuck()
    return f"settled {len(moved)} imports"
