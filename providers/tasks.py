"""Celery tasks: thin, take ids, call one service."""

from __future__ import annotations

import uuid

from celery import shared_task


@shared_task(name="providers.sync", acks_late=True)
def provider_sync(sync_id: str) -> str:
    """Run one sync; after a transient failure (network, 429, 5xx) schedule the next attempt
    with exponential backoff (SYNC_RETRY_BACKOFF, SYNC_MAX_RETRIES). Permanent failures (bad
    credential, payment required) are not retried."""
    from providers.services import sync_retry_schedule
    from providers.sync.engine import sync_run

    sync = sync_run(sync_id=uuid.UUID(sync_id))
    retry = sync_retry_schedule(sync=sync)
    suffix = f", retry {retry.pk} scheduled" if retry else ""
    return f"sync {sync.pk} {sync.status}{suffix}"


@shared_task(name="providers.sync_all", acks_late=True)
def providers_sync_all() -> str:
    from providers.services import syncs_enqueue_all

    return f"{syncs_enqueue_all()} syncs enqueued"


@shared_task(name="providers.settle_syncs")
def providers_settle_syncs() -> str:
    from providers.services import syncs_settle

    return f"{syncs_settle()} stuck syncs settled"
