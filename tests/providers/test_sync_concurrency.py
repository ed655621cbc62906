"""Two syncs of one connection at once run once (real threads, PostgreSQL)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection as db_connection

from finance.models import Transaction
from providers.models import Sync
from providers.services import sync_request
from providers.sync.engine import sync_run
from tests.providers.conftest import connect, day


def _in_threads(count: int, target) -> list:
    results: list = []
    barrier = threading.Barrier(count)

    def run() -> None:
        try:
            barrier.wait()
            results.append(target())
        finally:
            db_connection.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


@pytest.mark.django_db(transaction=True)
def test_parallel_requests_and_runs_sync_once(postgres_only, alice, lunchflow, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # enqueueing goes to the in-memory broker
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "1")
    for n in range(20):
        lunchflow.scenario.add_transaction("a1", f"t{n}", day(n), -1, "x")
    connection = connect(alice)

    requested = _in_threads(6, lambda: sync_request(connection=connection))
    assert len({sync.pk for sync, _ in requested}) == 1
    assert sum(created for _, created in requested) == 1
    sync_id = requested[0][0].pk

    finished = _in_threads(4, lambda: sync_run(sync_id=sync_id).status)
    assert len(finished) == 4
    assert Sync.objects.get(pk=sync_id).status == "completed"
    assert Transaction.objects.count() == 20
    transactions_calls = [p for p in lunchflow.scenario.paths() if p.endswith("/transactions")]
    assert len(transactions_calls) == 1
