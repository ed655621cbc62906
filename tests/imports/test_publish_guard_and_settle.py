"""Two publishes at once import once; the settler moves stuck imports to their data's state."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from finance.models import Transaction
from imports.models import Import
from imports.services.publish import import_publish
from imports.services.settle import imports_settle_stuck
from tests.conftest import make_client

CSV = b"date,name,amount\n" + b"".join(
    f"2024-01-{d:02d},Shop {d},-{d}.00\n".encode() for d in range(1, 29)
)


def _upload(client, account):
    resp = client.post(
        "/api/v1/imports",
        {"file": SimpleUploadedFile("a.csv", CSV), "account_id": str(account.pk)},
        format="multipart",
    )
    assert resp.status_code == 201, resp.content
    return resp.json()["data"]["id"]


@pytest.mark.django_db(transaction=True)
def test_two_publishes_at_once_import_once(alice, postgres_only):
    account = alice.account()
    import_id = _upload(alice.client, account)
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def publish() -> None:
        client = make_client(alice.key)
        barrier.wait()
        try:
            statuses.append(client.post(f"/api/v1/imports/{import_id}/publish").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=publish) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [202, 409]
    assert Transaction.objects.filter(account=account).count() == 28
    imp = Import.objects.get(pk=import_id)
    assert imp.status == "complete"
    assert imp.verification["readback"]["status"] == "matched"


def test_publish_guard_is_a_conditional_update(alice):
    """The second caller loses the pending -> importing race even with a stale object."""
    account = alice.account()
    import_id = _upload(alice.client, account)
    first = Import.objects.get(pk=import_id)
    stale = Import.objects.get(pk=import_id)
    import_publish(data_import=first, enqueue=False)
    from finance.api.errors import Conflict

    with pytest.raises(Conflict, match="importing"):
        import_publish(data_import=stale, enqueue=False)


@pytest.mark.django_db
def test_settler_moves_a_lost_publish_to_failed(alice):
    account = alice.account()
    imp = Import.objects.get(pk=_upload(alice.client, account))
    import_publish(data_import=imp, enqueue=False)  # a worker that never ran
    assert imports_settle_stuck(older_than=dt.timedelta(hours=1)) == []  # not old yet
    moved = imports_settle_stuck(older_than=dt.timedelta(0))
    assert moved == [(str(imp.pk), "importing", "failed")]
    imp.refresh_from_db()
    assert imp.status == "failed" and "Publish again" in imp.error
    assert Transaction.objects.count() == 0
    # A retry completes.
    from imports.services.publish import import_publish_run

    import_publish(data_import=imp, enqueue=False)
    assert import_publish_run(import_id=imp.pk) == "matched"


@pytest.mark.django_db
def test_settler_completes_an_import_whose_data_is_written(alice):
    account = alice.account()
    imp = Import.objects.get(pk=_upload(alice.client, account))
    import_publish(data_import=imp, enqueue=False)
    for row in imp.rows.all():  # the data committed, the status update was lost
        Transaction.objects.create(
            family=alice.family,
            account=account,
            date=row.date,
            amount=row.amount,
            currency=row.currency,
            name=row.name,
            source="import",
            external_id=row.fingerprint,
            import_id=imp.pk,
        )
    moved = imports_settle_stuck(older_than=dt.timedelta(0))
    assert moved == [(str(imp.pk), "importing", "complete")]
    imp.refresh_from_db()
    assert imp.verification["readback"]["status"] == "matched"
    # (Balances commit with the rows in publish's one ledger batch: the settler derives none.)


@pytest.mark.django_db
def test_settler_reverting_states(alice):
    account = alice.account()
    imp = Import.objects.get(pk=_upload(alice.client, account))
    Transaction.objects.create(
        family=alice.family,
        account=account,
        date=dt.date(2024, 1, 1),
        amount=1,
        currency="USD",
        name="x",
        import_id=imp.pk,
    )
    Import.objects.filter(pk=imp.pk).update(status="reverting")
    assert imports_settle_stuck(older_than=dt.timedelta(0)) == [
        (str(imp.pk), "reverting", "revert_failed")
    ]
    Transaction.objects.filter(import_id=imp.pk).delete()
    Import.objects.filter(pk=imp.pk).update(status="reverting")
    assert imports_settle_stuck(older_than=dt.timedelta(0)) == [
        (str(imp.pk), "reverting", "pending")
    ]


@pytest.mark.django_db
def test_large_upload_is_parsed_and_published_by_a_worker(
    alice, settings, django_capture_on_commit_callbacks
):
    settings.IMPORT_SYNC_PARSE_BYTES = 100
    account = alice.account()
    with django_capture_on_commit_callbacks(execute=True):
        resp = alice.client.post(
            "/api/v1/imports",
            {
                "file": SimpleUploadedFile("a.csv", CSV),
                "account_id": str(account.pk),
                "publish": "true",
            },
            format="multipart",
        )
    assert resp.status_code == 202, resp.content
    assert resp.json()["data"]["parsing"] is True
    data = alice.client.get(f"/api/v1/imports/{resp.json()['data']['id']}").json()["data"]
    assert data["parsing"] is False
    assert data["status"] == "complete"
    assert data["verification"]["readback"]["status"] == "matched"
    assert Transaction.objects.filter(account=account).count() == 28


@pytest.mark.django_db
def test_large_upload_header_problems_are_422_at_once(alice, settings):
    settings.IMPORT_SYNC_PARSE_BYTES = 10
    resp = alice.client.post(
        "/api/v1/imports",
        {"file": SimpleUploadedFile("a.csv", b"when,name,amount\n2024-01-01,A,1\n")},
        format="multipart",
    )
    assert resp.status_code == 422
    assert Import.objects.count() == 0


@pytest.mark.django_db
def test_settler_releases_a_lost_parse(alice):
    imp = Import.objects.get(pk=_upload(alice.client, alice.account()))
    Import.objects.filter(pk=imp.pk).update(parsing=True)
    assert imports_settle_stuck(older_than=dt.timedelta(0)) == [(str(imp.pk), "parsing", "pending")]
    imp.refresh_from_db()
    assert not imp.parsing and "parse it again" in imp.error
