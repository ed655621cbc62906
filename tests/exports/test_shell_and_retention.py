"""The shell commands, the admin page and the retention of archives (issue 23)."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from exports.models import Export
from exports.services import exports_expire
from exports.tasks import exports_expire_task
from finance.models import Transaction, User
from tests.exports.helpers import build_rich_household, canonical, ok, read_archive

pytestmark = pytest.mark.django_db


def test_export_and_restore_from_the_shell(alice, tmp_path, django_capture_on_commit_callbacks):
    build_rich_household(alice, django_capture_on_commit_callbacks)
    archive = tmp_path / "alice.zip"
    out = io.StringIO()
    call_command("export_household", str(archive), "--email", "ALICE@example.com", stdout=out)
    assert "exported transactions:" in out.getvalue() and f"Wrote {archive}" in out.getvalue()
    # WHEN it is restored for a new user: the household and its user are created
    out = io.StringIO()
    call_command("restore_household", str(archive), "--email", "dora@example.com", stdout=out)
    assert "restored transactions:" in out.getvalue() and '"status": "matched"' in out.getvalue()
    dora = User.objects.get(email="dora@example.com")
    assert dora.family.name == alice.family.name and dora.family_id != alice.family.pk
    assert (
        Transaction.objects.filter(family=dora.family).count()
        == Transaction.objects.filter(family=alice.family).count()
    )
    # THEN dora's archive is alice's, record by record
    again = tmp_path / "dora.zip"
    call_command(
        "export_household", str(again), "--email", "dora@example.com", stdout=io.StringIO()
    )
    assert canonical(read_archive(again.read_bytes())[1]) == canonical(
        read_archive(archive.read_bytes())[1]
    )
    # AND a second restore into dora's household (which has accounts now) is refused
    with pytest.raises(CommandError, match="already has accounts"):
        call_command(
            "restore_household", str(archive), "--email", "dora@example.com", stdout=io.StringIO()
        )
    # a file that is no archive is refused before any household is made
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    with pytest.raises(CommandError, match="not a ZIP"):
        call_command(
            "restore_household", str(junk), "--email", "erin@example.com", stdout=io.StringIO()
        )
    assert not User.objects.filter(email="erin@example.com").exists()


def test_export_household_needs_a_household_user(tmp_path):
    with pytest.raises(CommandError, match="No household user"):
        call_command("export_household", str(tmp_path / "x.zip"), "--email", "nobody@example.com")


def test_old_archives_are_deleted_by_the_beat_task(
    alice, settings, django_capture_on_commit_callbacks
):
    settings.EXPORT_RETENTION_HOURS = 72
    alice.account(name="Cash")
    with django_capture_on_commit_callbacks(execute=True):
        old_id = ok(alice.client.post("/api/v1/exports"), 202)["id"]
        new_id = ok(alice.client.post("/api/v1/exports"), 202)["id"]
    old, new = Export.objects.get(pk=old_id), Export.objects.get(pk=new_id)
    old_file = Path(settings.EXPORTS_DIR) / old.file_name
    new_file = Path(settings.EXPORTS_DIR) / new.file_name
    assert old_file.is_file() and new_file.is_file()
    Export.objects.filter(pk=old.pk).update(created_at=timezone.now() - dt.timedelta(hours=73))
    # WHEN the scheduled task runs
    assert exports_expire_task.delay().get() == "expired 1 exports"
    # THEN the old archive and its export are gone, the recent one is kept
    assert not old_file.exists() and not Export.objects.filter(pk=old.pk).exists()
    assert new_file.is_file()
    r = alice.client.get(f"/api/v1/exports/{old_id}")
    assert r.status_code == 404
    assert alice.client.get(f"/api/v1/exports/{new_id}/download").status_code == 200
    # the setting is honoured: a shorter retention takes the recent one too
    settings.EXPORT_RETENTION_HOURS = 1
    assert exports_expire(now=timezone.now() + dt.timedelta(hours=2)) == 1
    assert not new_file.exists()


def test_the_retention_task_is_scheduled():
    from config.schedule import beat_schedule

    entry = beat_schedule()["Delete expired exports"]
    assert entry["task"] == "exports.expire"


def _admin_client(household):
    from django.test import Client

    from finance.services.households import household_permissions_grant

    household_permissions_grant(user=household.user)
    client = Client()
    client.force_login(household.user)
    return client


def test_the_export_my_data_page(alice, charlie, django_capture_on_commit_callbacks):
    alice.account(name="Cash")
    client = _admin_client(alice)
    # GIVEN the start page, WHEN alice presses the button
    page = client.get("/admin/exports/export/add/")
    assert (
        page.status_code == 200
        and b"Export now" in page.content
        and b"id_family" not in page.content
    )
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post("/admin/exports/export/add/", {"family": str(charlie.family.pk)})
    assert r.status_code == 302
    # THEN her household (never the one she named) is exported, listed with its download
    export = Export.objects.get()
    assert export.family == alice.family and export.status == Export.Status.COMPLETE
    listing = client.get("/admin/exports/export/").content.decode()
    assert "Export my data" in listing
    download = f"/admin/exports/export/{export.pk}/download/"
    assert download in listing
    r = client.get(download)
    assert r.status_code == 200 and r["Content-Type"] == "application/zip"
    stamp = export.created_at.strftime("%Y%m%d-%H%M%S")
    assert r["Content-Disposition"] == f'attachment; filename="household-export-{stamp}.zip"'
    assert b"".join(r.streaming_content)[:2] == b"PK"
    # AND charlie neither sees it nor downloads it
    stranger = _admin_client(charlie)
    assert download not in stranger.get("/admin/exports/export/").content.decode()
    assert stranger.get(download).status_code == 404


def test_staff_can_export_any_household(alice, django_capture_on_commit_callbacks):
    from django.test import Client

    from tests.factories import UserFactory

    alice.account(name="Cash")
    operator = UserFactory(is_superuser=True, is_staff=True, family=None)
    client = Client()
    client.force_login(operator)
    page = client.get("/admin/exports/export/add/")
    assert b"id_family" in page.content and alice.family.name.encode() in page.content
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/admin/exports/export/add/", {"family": str(alice.family.pk)})
    export = Export.objects.get()
    assert export.family == alice.family and export.requested_by == operator
    assert client.get(f"/admin/exports/export/{export.pk}/download/").status_code == 200


def test_an_abandoned_restore_loses_its_upload(alice, settings):
    from exports.models import Restore

    upload = Path(settings.RESTORES_DIR) / "left.zip"
    upload.parent.mkdir(parents=True, exist_ok=True)
    upload.write_bytes(b"PK")
    restore = Restore.objects.create(family=alice.family, file_name="left.zip")
    Restore.objects.filter(pk=restore.pk).update(
        created_at=timezone.now() - dt.timedelta(hours=settings.EXPORT_RETENTION_HOURS + 1)
    )
    exports_expire()
    restore.refresh_from_db()
    assert restore.status == Restore.Status.FAILED and not upload.exists()
    r = alice.client.get(f"/api/v1/restores/{restore.pk}")
    assert r.status_code == 200 and r.json()["error"]
