"""The fake Lunch Flow server over real HTTP on 127.0.0.1, and sync helpers."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from django.utils import timezone

from providers.models import ProviderConnection, Sync
from providers.services import connection_create, sync_request
from providers.sync.engine import sync_run
from providers.testing.lunchflow_server import FakeLunchFlow, Scenario


@pytest.fixture
def lunchflow(settings) -> Iterator[FakeLunchFlow]:
    server = FakeLunchFlow(Scenario()).start()
    settings.LUNCHFLOW_BASE_URL = server.base_url
    settings.LUNCHFLOW_INCLUDE_PENDING = True
    settings.PROVIDER_HTTP_TIMEOUT = 2.0
    settings.PROVIDER_MAX_RETRY_AFTER = 2.0
    try:
        yield server
    finally:
        server.stop()


def day(n: int) -> str:
    """The date n days ago, ISO."""
    return (timezone.now().date() - dt.timedelta(days=n)).isoformat()


def connect(household, key: str = "test-key") -> ProviderConnection:
    connection, _ = connection_create(family=household.family, provider="lunchflow", api_key=key)
    return connection


def run_sync(connection: ProviderConnection, provider_account=None) -> Sync:
    """Request and run a sync inline (the engine, without the task queue)."""
    from django.db import transaction

    with transaction.atomic():
        sync, created = sync_request(connection=connection, provider_account=provider_account)
    assert created, "an earlier sync is still active"
    return sync_run(sync_id=sync.pk)
