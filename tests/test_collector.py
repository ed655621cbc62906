"""The collector's cycle search paused for a bulk loop (core/collector.py): off inside, back
after whatever the end, nested and overlapping pauses (threads) ending with the last, a
collector that was off left off; and a CSV parse through the API runs its row loop paused."""

from __future__ import annotations

import gc
import threading

import pytest

from core.collector import cycles_paused
from tests.imports.test_imports_api import upload


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_off_inside_on_after_even_when_the_loop_fails():
    with cycles_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), cycles_paused():
        raise ValueError("a bad row")
    assert gc.isenabled()


def test_nested_and_overlapping_pauses_end_with_the_last():
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with cycles_paused():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with cycles_paused():
        thread.start()
        assert entered.wait(10)
        with cycles_paused():
            assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's pause is still open
    release.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    with cycles_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


@pytest.mark.django_db
def test_a_csv_parse_runs_its_row_loop_without_collections(alice):
    rows = 20_000
    body = "date,name,amount\n" + "".join(
        f"2024-01-{1 + i % 28:02d},Shop {i},-{i % 500}.25\n" for i in range(rows)
    )
    alice.account(name="Checking")
    collections: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        r = upload(alice.client, body.encode())
    finally:
        gc.callbacks.remove(count)
    assert r.status_code == 201, r.content
    assert r.json()["data"]["stats"]["rows_count"] == rows
    # Unpaused the request ran 198 collections, paused 60 (the upload's own work around it).
    assert len(collections) < 120, collections


def test_a_celery_worker_process_freezes_its_heap_once_forked():
    from celery.signals import worker_process_init

    from config import celery  # noqa: F401 - connects the handler

    gc.unfreeze()
    try:
        worker_process_init.send(sender=None)
        assert gc.get_freeze_count() > 10_000  # Django, the apps, every view loaded
    finally:
        gc.unfreeze()
