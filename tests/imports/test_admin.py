from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from finance.models import Transaction
from finance.services.households import household_permissions_grant
from imports.models import Import

pytestmark = pytest.mark.django_db


def _admin(household) -> Client:
    household_permissions_grant(user=household.user)
    client = Client()
    client.force_login(household.user)
    return client


def _import(household) -> Import:
    account = household.account()
    resp = household.client.post(
        "/api/v1/imports",
        {
            "file": SimpleUploadedFile(
                "a.csv", b"date,name,amount\n2024-01-01,Secret shop,-5\n2024-01-02,x,\n"
            ),
            "account_id": str(account.pk),
        },
        format="multipart",
    )
    return Import.objects.get(pk=resp.json()["data"]["id"])


def test_admin_lists_own_imports_and_row_errors_only(alice, charlie):
    mine, theirs = _import(alice), _import(charlie)
    client = _admin(alice)
    page = client.get("/admin/imports/import/").content.decode()
    assert str(mine.pk)[:8] in page or "a.csv" in page
    # Both files are a.csv: the links tell whose import the list shows.
    assert f"/admin/imports/import/{mine.pk}/change/" in page
    assert f"/admin/imports/import/{theirs.pk}/change/" not in page
    assert client.get(f"/admin/imports/import/{theirs.pk}/change/").status_code in (302, 404)
    rows = client.get("/admin/imports/importrow/?valid__exact=0").content.decode()
    assert "is empty" in rows
    assert (
        "Secret shop"
        not in _admin(charlie)
        .get(f"/admin/imports/importrow/?data_import__id__exact={mine.pk}")
        .content.decode()
    )


def test_admin_publish_action(alice, django_capture_on_commit_callbacks):
    imp = _import(alice)
    imp.rows.filter(valid=False).update(skipped=True)
    from imports.services.stats import import_stats_refresh

    import_stats_refresh(data_import=imp)
    with django_capture_on_commit_callbacks(execute=True):
        resp = _admin(alice).post(
            "/admin/imports/import/",
            {"action": "publish_selected", "_selected_action": [str(imp.pk)]},
        )
    assert resp.status_code == 302
    imp.refresh_from_db()
    assert imp.status == "complete"
    assert Transaction.objects.filter(import_id=imp.pk).count() == 1
