from __future__ import annotations

import re

import pytest
from django.test import Client

from finance.models import ApiKey
from finance.services.households import household_permissions_grant
from tests.conftest import make_client


def logged_in(household) -> Client:
    household_permissions_grant(user=household.user)
    client = Client()
    client.force_login(household.user)
    return client


@pytest.mark.django_db
def test_household_user_creates_sees_once_and_revokes_a_key(alice):
    browser = logged_in(alice)
    r = browser.post(
        "/admin/finance/apikey/add/",
        {"name": "laptop", "scope": "read", "expires_at_0": "", "expires_at_1": ""},
    )
    assert r.status_code == 200, r.content[:2000]
    raw = re.search(rb'value="(pfk_[^"]+)"', r.content).group(1).decode()
    key = ApiKey.objects.get(name="laptop")
    assert key.user == alice.user and key.scope == "read"
    assert raw not in (key.key_hash, key.prefix)
    assert make_client(raw).get("/api/v1/transactions").status_code == 200

    listing = browser.get("/admin/finance/apikey/")
    assert b"laptop" in listing.content and raw.encode() not in listing.content
    change = browser.get(f"/admin/finance/apikey/{key.pk}/change/")
    assert raw.encode() not in change.content

    r = browser.post(f"/admin/finance/apikey/{key.pk}/change/", {"name": "laptop", "_revoke": "1"})
    assert r.status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert make_client(raw).get("/api/v1/transactions").status_code == 401


@pytest.mark.django_db
def test_household_user_sees_only_their_own_keys(alice, charlie):
    browser = logged_in(alice)
    listing = browser.get("/admin/finance/apikey/")
    assert listing.status_code == 200
    theirs = ApiKey.objects.filter(user=charlie.user).first()
    assert theirs.prefix.encode() not in listing.content
    assert browser.get(f"/admin/finance/apikey/{theirs.pk}/change/").status_code in (302, 404)
    r = browser.post(
        "/admin/finance/apikey/", {"action": "revoke_keys", "_selected_action": [str(theirs.pk)]}
    )
    theirs.refresh_from_db()
    assert theirs.revoked_at is None, r.status_code
