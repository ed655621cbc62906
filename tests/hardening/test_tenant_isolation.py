"""Tenant isolation, generated from the URL configuration: every /api/v1 route that takes a
record id, and every admin page, is tried by household B against household A's records.

A new endpoint or admin page is covered without anyone remembering; a model with no factory
in `tests.tenancy.RECORD_FACTORIES` fails here loudly instead of going untested."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib import admin
from django.test import Client

from finance.services.households import household_permissions_grant
from tests.tenancy import RECORD_FACTORIES, api_routes, make_record


@pytest.mark.django_db
def test_every_id_route_answers_404_to_another_household(alice, charlie):
    routes = api_routes(charlie.user)
    assert routes, "no API routes found"
    checked = 0
    for route in routes:
        if route.model is None:
            continue
        record = make_record(route.model, alice.family)
        url = route.url(record.pk)
        for method in route.methods:
            body = {route.root_key: {"name": "hijacked"}} if route.root_key else {}
            call = getattr(charlie.client, method.lower())
            if method in ("GET", "DELETE"):
                response = call(url)
            else:
                response = call(url, data=json.dumps(body), content_type="application/json")
            assert response.status_code == 404, (
                method,
                url,
                response.status_code,
                response.content[:300],
            )
            assert response.json()["error"] == "not_found"
            checked += 1
        # ...and the record is untouched and still visible to its owner
        assert route.model._default_manager.filter(pk=record.pk).exists(), url
        if "GET" in route.methods:
            assert alice.client.get(url).status_code == 200, url
    assert checked > 0


@pytest.mark.django_db
def test_no_list_shows_another_households_records(alice, charlie):
    records = [make_record(model, alice.family) for model in RECORD_FACTORIES]
    ids = {str(r.pk) for r in records}
    for route in api_routes(charlie.user, lists=True):
        response = charlie.client.get(route.list_url, {"per_page": 100})
        assert response.status_code == 200, (route.list_url, response.content[:300])
        leaked = ids & set(re.findall(r"[0-9a-f-]{36}", response.content.decode()))
        assert not leaked, (route.list_url, leaked)


@pytest.mark.django_db
def test_admin_shows_another_household_none_of_its_rows(alice, charlie):
    household_permissions_grant(user=charlie.user)
    browser = Client()
    browser.force_login(charlie.user)
    for model, model_admin in admin.site._registry.items():
        if model not in RECORD_FACTORIES:
            continue
        record = make_record(model, alice.family)
        info = (model._meta.app_label, model._meta.model_name)
        changelist = browser.get(f"/admin/{info[0]}/{info[1]}/")
        if changelist.status_code == 200:
            assert str(record.pk).encode() not in changelist.content, info
        for page in ("change", "delete", "history"):
            r = browser.get(f"/admin/{info[0]}/{info[1]}/{record.pk}/{page}/")
            assert r.status_code in (302, 403, 404), (info, page, r.status_code)
            if r.status_code == 302:
                assert str(record.pk) not in r["Location"], (info, page)
        # autocomplete: any admin that offers search is queried for the record's name
        if model_admin.search_fields:
            for source_model, source_admin in admin.site._registry.items():
                for field in source_model._meta.get_fields():
                    if (
                        getattr(field, "related_model", None) is model
                        and field.concrete
                        and field.name in (source_admin.autocomplete_fields or ())
                    ):
                        r = browser.get(
                            "/admin/autocomplete/",
                            {
                                "app_label": source_model._meta.app_label,
                                "model_name": source_model._meta.model_name,
                                "field_name": field.name,
                                "term": "",
                            },
                        )
                        if r.status_code == 200:
                            assert str(record.pk) not in r.content.decode(), (info, field)
