"""The beat schedule, the scheduled refresh, retries with backoff and the settler."""

from __future__ import annotations

import datetime as dt

import pytest
from celery.schedules import crontab, schedule
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, transaction
from django.utils import timezone

from config.schedule import beat_schedule
from providers.models import ProviderConnection, Sync
from providers.services import (
    NEVER_STARTED_ERROR,
    STUCK_ERROR,
    retry_countdown,
    sync_request,
    sync_retry_schedule,
    syncs_settle,
)
from providers.tasks import provider_sync, providers_settle_syncs, providers_sync_all
from providers.testing.lunchflow_server import Fault
from tests.providers.conftest import connect, day, run_sync


def test_the_schedule_has_the_daily_sync_and_the_settler(settings):
    settings.SYNC_SCHEDULE_HOUR, settings.SYNC_SCHEDULE_MINUTE = 5, 30
    settings.SYNC_SCHEDULE_TIMEZONE = "Europe/Paris"
    entries = beat_schedule()
    sync = entries["Sync every provider connection"]
    assert sync["task"] == "providers.sync_all" and sync["options"]["expires"] > 0
    assert isinstance(sync["schedule"], crontab)
    assert sync["schedule"].hour == {5} and sync["schedule"].minute == {30}
    assert str(sync["schedule"].tz) == "Europe/Paris"
    settle = entries["Settle stuck syncs"]
    assert settle["task"] == "providers.settle_syncs" and settle["options"]["expires"] > 0
    from config.celery import app

    assert {"providers.sync_all", "providers.settle_syncs", "providers.sync"} <= set(app.tasks)
    # every entry names a task a worker registers (a misspelt name would never run)
    app.autodiscover_tasks(force=True)  # as the worker does at start
    assert {entry["task"] for entry in entries.values()} <= set(app.tasks)


def test_the_schedule_env_overrides(settings):
    settings.SYNC_INTERVAL_SECONDS = 15
    every = beat_schedule()["Sync every provider connection"]["schedule"]
    assert isinstance(every, schedule) and every.run_every.total_seconds() == 15
    settings.SYNC_INTERVAL_SECONDS = 0
    settings.SYNC_SCHEDULE_CRON = "*/5 * * * *"
    cron = beat_schedule()["Sync every provider connection"]["schedule"]
    assert cron.minute == set(range(0, 60, 5))
    settings.SYNC_SCHEDULE_CRON = "every day"
    with pytest.raises(ImproperlyConfigured):
        beat_schedule()


def test_the_scheduled_task_syncs_every_good_connection(
    alice, charlie, lunchflow, django_capture_on_commit_callbacks
):
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "1")
    lunchflow.scenario.add_transaction("a1", "t1", day(1), -1, "x")
    first, second = connect(alice), connect(charlie)
    waiting = connect(alice)
    ProviderConnection.objects.filter(pk=waiting.pk).update(status="requires_update")
    with django_capture_on_commit_callbacks(execute=True):
        assert providers_sync_all.delay().get() == "2 syncs enqueued"
    assert {s.connection_id for s in Sync.objects.all()} == {first.pk, second.pk}
    assert set(Sync.objects.values_list("status", flat=True)) == {"completed"}


def test_only_one_active_sync_per_connection_at_the_database_level(alice, lunchflow):
    connection = connect(alice)
    Sync.objects.create(connection=connection)
    with pytest.raises(IntegrityError), transaction.atomic():
        Sync.objects.create(connection=connection, status=Sync.Status.SYNCING)
    again, created = sync_request(connection=connection)
    assert again.status == "pending"
    assert created is False and Sync.objects.count() == 1


def test_a_sync_that_is_not_pending_is_not_run_again(alice, lunchflow):
    connection = connect(alice)
    sync = run_sync(connection)
    requests = len(lunchflow.scenario.requests)
    assert provider_sync.delay(str(sync.pk)).get().endswith("completed")
    assert len(lunchflow.scenario.requests) == requests


def test_settler_fails_stuck_syncs_so_the_next_can_run(alice, lunchflow):
    connection = connect(alice)
    stuck = Sync.objects.create(connection=connection, status=Sync.Status.SYNCING)
    Sync.objects.filter(pk=stuck.pk).update(updated_at=timezone.now() - dt.timedelta(hours=1))
    assert providers_settle_syncs.delay().get() == "1 stuck syncs settled"
    stuck.refresh_from_db()
    assert stuck.status == "failed" and stuck.error == STUCK_ERROR
    assert run_sync(connection).status == "completed"


def test_settler_leaves_fresh_syncs_and_fails_lost_pending_ones(alice, lunchflow):
    connection = connect(alice)
    fresh = Sync.objects.create(connection=connection, status=Sync.Status.SYNCING)
    assert syncs_settle() == 0
    fresh.status = "failed"
    fresh.save()
    lost = Sync.objects.create(connection=connection)
    assert syncs_settle(now=timezone.now() + dt.timedelta(hours=2)) == 1
    lost.refresh_from_db()
    assert lost.error == NEVER_STARTED_ERROR


def test_transient_failures_are_retried_with_backoff(
    alice, lunchflow, settings, django_capture_on_commit_callbacks, monkeypatch
):
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "1")
    connection = connect(alice)
    lunchflow.scenario.faults["/accounts"] = Fault(status=503)
    failed = run_sync(connection)
    assert failed.status == "failed" and failed.retryable
    sent = []
    monkeypatch.setattr(
        provider_sync, "apply_async", lambda args, countdown: sent.append((args, countdown))
    )
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with django_capture_on_commit_callbacks(execute=True):
        retry = sync_retry_schedule(sync=failed)
    assert retry.attempt == 1 and retry.status == "pending"
    assert sent == [((str(retry.pk),), retry_countdown(0))]
    assert [retry_countdown(n) for n in range(3)] == [60, 120, 240]
    Sync.objects.filter(pk=retry.pk).update(status="failed", retryable=True, attempt=3)
    retry.refresh_from_db()
    assert sync_retry_schedule(sync=retry) is None  # SYNC_MAX_RETRIES reached


def test_permanent_failures_are_not_retried(alice, lunchflow, settings):
    connection = connect(alice)
    lunchflow.scenario.api_keys.clear()
    failed = run_sync(connection)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    assert failed.retryable is False and sync_retry_schedule(sync=failed) is None


def test_a_retry_waits_at_least_what_retry_after_asked(
    alice, lunchflow, settings, django_capture_on_commit_callbacks, monkeypatch
):
    settings.PROVIDER_MAX_RETRY_AFTER = 1
    connection = connect(alice)
    lunchflow.scenario.faults["/accounts"] = Fault(status=429, headers={"Retry-After": "600"})
    failed = run_sync(connection)
    assert failed.status == "failed" and failed.retryable and "rate limiting" in failed.error
    sent = []
    monkeypatch.setattr(
        provider_sync, "apply_async", lambda args, countdown: sent.append(countdown)
    )
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with django_capture_on_commit_callbacks(execute=True):
        sync_retry_schedule(sync=failed)
    assert sent == [600.0]
