"""The import list pages read a fixed number of queries, however many imports are listed; the
dashboard names and links the household's recent imports."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.imports.test_admin import _admin, _import

pytestmark = pytest.mark.django_db


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


@pytest.mark.parametrize("url", ["/admin/imports/import/", "/admin/imports/importrow/"])
def test_import_lists_do_not_query_per_row(alice, url):
    client = _admin(alice)
    _import(alice)
    one = _queries(client, url)
    for _ in range(4):
        _import(alice)
    assert _queries(client, url) == one


def test_dashboard_links_recent_imports_by_file_name(alice, charlie):
    mine, theirs = _import(alice), _import(charlie)
    page = _admin(alice).get(reverse("admin:index")).content.decode()
    mine_url = reverse("admin:imports_import_change", args=[mine.pk])
    assert f'<a href="{mine_url}">a.csv</a>' in page
    assert reverse("admin:imports_import_change", args=[theirs.pk]) not in page
