"""The collector's cycle search paused for a bulk loop (core/collector.py): off inside, back
after whatever the end, nested and overlapping pauses (threads) ending with the last, a
collector that was off left off; and a CSV or a statement file parsed through the API runs its
row loop paused."""

from __future__ import annotations

import gc
import threading

import pytest

from core.collector import cycles_paused
from tests.imports.statement_helpers import uploaded


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


ROWS = 20_000
CSV = "date,name,amount\n" + "".join(
    f"2024-01-{1 + i % 28:02d},Shop {i},-{i % 500}.25\n" for i in range(ROWS)
)
QIF = "!Type:Bank\n" + "".join(
    f"D01/{1 + i % 28:02d}/2024\nT-{i % 500}.25\nPShop {i}\n^\n" for i in range(ROWS)
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "name", "import_type", "most"),
    [
        # Unpaused the request ran 198 collections, paused 60 (its own work around the loop).
        pytest.param(CSV, "bank.csv", "TransactionImport", 120, id="csv"),
        # Unpaused 136, paused 2.
        pytest.param(QIF, "bank.qif", "QifImport", 40, id="qif"),
    ],
)
def test_a_files_parse_runs_its_row_loop_without_collections(alice, body, name, import_type, most):
    account = alice.account(name="Checking")
    collections: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        data = uploaded(alice.client, body.encode(), name, import_type, account_id=str(account.pk))
    finally:
        gc.callbacks.remove(count)
    assert data["stats"]["rows_count"] == ROWS
    assert len(collections) < most, collections


def test_a_celery_worker_process_freezes_its_heap_once_forked():
    from celery.signals import worker_process_init

    from config import celery  # noqa: F401 - connects the handler

    gc.unfreeze()
    try:
        worker_process_init.send(sender=None)
        assert gc.get_freeze_count() > 10_000  # Django, the apps, every view loaded
    finally:
        gc.unfreeze()
