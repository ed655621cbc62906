"""Issue 10 item 5 for imports: a real worker process publishing an import is SIGKILLed in the
middle of its one publish transaction, on PostgreSQL. Every row has been inserted (the test
sees the child's uncommitted writes on the transactions table in pg_locks) but the last: the
child is blocked inserting it, because the test holds that row's idempotency key in an open
transaction of its own.

Then: nothing of the import is in the ledger (all or nothing), the settler leaves the publish
alone while the worker lives and moves it to `failed` once the worker is gone, and publishing
again completes with every row exactly once and the balance right."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from finance.models import Account, Transaction
from imports.models import Import, ImportRow
from imports.selectors import with_transaction_ids
from imports.services.publish import import_publish, import_publish_run
from imports.services.settle import LOST, imports_settle_stuck
from tests.hardening.crash import (
    KeyHold,
    child_sessions,
    sigkill,
    spawn,
    tables_written_by,
    wait_for,
    wait_sessions_gone,
)

ROWS = 3000
CSV = b"date,name,amount\n" + b"".join(
    f"2024-{1 + n % 12:02d}-{1 + n % 28:02d},Shop {n},-{1 + n % 50}.25\n".encode()
    for n in range(ROWS)
)
EXPECTED_BALANCE = -sum(Decimal(f"{1 + n % 50}.25") for n in range(ROWS))
CHILD_PUBLISH = """
from imports.tasks import import_publish_task
print(import_publish_task({import_id!r}), flush=True)
"""


@pytest.mark.django_db(transaction=True)
def test_killed_publish_writes_nothing_and_recovers(postgres_only, alice, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    # GIVEN a parsed import of ROWS rows, moved to `importing` (what the API's publish does)
    account = alice.account(currency="USD")
    response = alice.client.post(
        "/api/v1/imports",
        {"file": SimpleUploadedFile("big.csv", CSV), "account_id": str(account.pk)},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    imp = Import.objects.get(pk=response.json()["data"]["id"])
    assert imp.stats["rows_count"] == ROWS, imp.stats
    import_publish(data_import=imp, enqueue=False)

    # WHEN a worker publishes it and is killed mid-transaction
    last_row = ImportRow.objects.filter(data_import=imp).order_by("-id").first()
    lock = KeyHold(
        family_id=alice.family.pk, account_id=account.pk, source="import", key=last_row.fingerprint
    )
    child = spawn(CHILD_PUBLISH.format(import_id=str(imp.pk)), MEDIA_ROOT=settings.MEDIA_ROOT)
    try:
        session = wait_for(
            lambda: next(
                (
                    s
                    for s in child_sessions()
                    if s["wait_event_type"] == "Lock"
                    and Transaction._meta.db_table in (s["query"] or "")
                ),
                None,
            ),
            "the publish to block on the last row's key, mid-transaction",
            child,
            timeout=120,
        )
        assert Transaction._meta.db_table in tables_written_by(session["pid"])
        # a live publish (its transaction holds the import's row lock) is left alone
        assert imports_settle_stuck(older_than=dt.timedelta(0)) == []
        sigkill(child)
    finally:
        if child.poll() is None:
            sigkill(child)
        lock.release()
    wait_sessions_gone()

    # THEN nothing of the import reached the ledger
    assert not Transaction.objects.filter(account=account).exists()
    linked = with_transaction_ids(ImportRow.objects.filter(data_import=imp), imp)
    assert not linked.filter(transaction_id__isnull=False).exists()
    assert Import.objects.get(pk=imp.pk).status == "importing"
    # AND the settler settles it to its true state
    moved = imports_settle_stuck(older_than=dt.timedelta(0))
    assert moved == [(str(imp.pk), "importing", "failed")]
    imp.refresh_from_db()
    assert (imp.status, imp.error) == ("failed", LOST)

    # AND publishing again completes: every row exactly once, balance right
    import_publish(data_import=imp, enqueue=False)
    assert import_publish_run(import_id=imp.pk) == "matched"
    imp.refresh_from_db()
    assert imp.status == "complete"
    ids = list(Transaction.objects.filter(account=account).values_list("external_id", flat=True))
    assert len(ids) == ROWS == len(set(ids))
    assert Account.objects.get(pk=account.pk).balance == EXPECTED_BALANCE
