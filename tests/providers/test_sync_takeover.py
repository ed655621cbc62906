"""A sync whose worker was SIGKILLed is run again when the broker hands its task out again
(acks_late: the task was never acknowledged), instead of staying `syncing` until the settler
fails it; and a redelivery while the first runner is still alive does nothing.

"Alive" is the connection's runner lock (providers/sync/lock.py), held here from a second
database session (PostgreSQL) or a second open file (SQLite), as another worker process would.
scripts/e2e.py does the same with real worker processes and SIGKILL."""

from __future__ import annotations

import datetime as dt
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from django.db import connection as db
from django.utils import timezone

from finance.models import Transaction
from providers.models import Sync
from providers.services import syncs_settle
from providers.sync.lock import _advisory_key, _lock_path
from providers.tasks import provider_sync
from tests.providers.conftest import connect, day


@contextmanager
def runner_alive(connection_id) -> Iterator[None]:
    """Hold the connection's runner lock the way a live worker elsewhere would."""
    if db.vendor == "postgresql":
        from tests.hardening.crash import database_url

        with psycopg.connect(database_url(), autocommit=True) as other:
            other.execute("SELECT pg_advisory_lock(%s)", [_advisory_key(connection_id)])
            yield
        return
    fd = os.open(_lock_path(connection_id), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
    finally:
        os.close(fd)


def _orphan(connection) -> Sync:
    """The Sync a killed worker leaves: claimed (`syncing`, started), never finished."""
    started = timezone.now() - dt.timedelta(minutes=2)
    return Sync.objects.create(
        connection=connection, status=Sync.Status.SYNCING, started_at=started
    )


@pytest.fixture
def upstream(lunchflow):
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "90")
    for n in range(5):
        lunchflow.scenario.add_transaction("a1", f"t{n}", day(n + 1), -2, f"row {n}")
    return lunchflow


@pytest.mark.django_db(transaction=True)
def test_a_redelivered_sync_whose_runner_died_is_run_again_to_completion(alice, upstream, caplog):
    connection = connect(alice)
    lost = "its runner was lost"
    orphan = _orphan(connection)

    # the broker hands the unacknowledged task out again
    assert provider_sync(str(orphan.pk)) == f"sync {orphan.pk} completed"
    assert [r.getMessage() for r in caplog.records if lost in r.getMessage()] == [
        f"sync {orphan.pk}: {lost}; running it again"
    ]

    body = alice.client.get(f"/api/v1/syncs/{orphan.pk}").json()
    assert body["status"] == "completed", body
    assert Transaction.objects.filter(family=alice.family).count() == 5
    # delivered once more (a second copy of the message): nothing runs, nothing doubles
    requests = len(upstream.scenario.requests)
    assert provider_sync(str(orphan.pk)).endswith("completed")
    assert len(upstream.scenario.requests) == requests
    assert Transaction.objects.filter(family=alice.family).count() == 5
    assert len([r for r in caplog.records if lost in r.getMessage()]) == 1


@pytest.mark.django_db(transaction=True)
def test_a_redelivery_while_the_runner_is_alive_leaves_the_sync_to_it(alice, upstream):
    connection = connect(alice)
    running = _orphan(connection)
    Sync.objects.filter(pk=running.pk).update(updated_at=timezone.now() - dt.timedelta(hours=2))
    requests = len(upstream.scenario.requests)

    with runner_alive(connection.pk):
        assert provider_sync(str(running.pk)) == f"sync {running.pk} syncing"
        # nor does the settler fail it, however old its heartbeat
        assert syncs_settle() == 0
    assert len(upstream.scenario.requests) == requests
    assert alice.client.get(f"/api/v1/syncs/{running.pk}").json()["status"] == "syncing"
    assert Transaction.objects.filter(family=alice.family).count() == 0

    # once that runner is gone, the settler sees a lost sync
    assert syncs_settle() == 1
    assert alice.client.get(f"/api/v1/syncs/{running.pk}").json()["status"] == "failed"
