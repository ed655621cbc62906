"""Celery tasks: thin, take ids, call one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="exports.run", acks_late=True)
def export_run_task(export_id: str) -> str:
    from exports.services import export_run

    return export_run(export_id=export_id)


@shared_task(name="exports.restore", acks_late=True)
def restore_run_task(restore_id: str) -> str:
    from exports.services import restore_run

    return restore_run(restore_id=restore_id)


@shared_task(name="exports.expire", expires=3000)
def exports_expire_task() -> str:
    from exports.services import exports_expire

    return f"expired {exports_expire()} exports"
