from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from finance.models import ApiKey
from finance.services.api_keys import api_key_create, api_key_revoke
from tests.conftest import assert_error, make_client

URL = "/api/v1/transactions"


@pytest.mark.django_db
class TestAuthentication:
    def test_missing_unknown_revoked_expired_keys_are_401(self, alice, anon):
        assert_error(anon.get(URL), 401, "unauthorized")
        assert_error(make_client("pfk_abcdefgh_nope").get(URL), 401, "unauthorized")
        assert_error(make_client("garbage").get(URL), 401, "unauthorized")
        key, raw = api_key_create(user=alice.user, name="temp")
        assert make_client(raw).get(URL).status_code == 200
        api_key_revoke(key=key)
        assert_error(make_client(raw).get(URL), 401, "unauthorized")
        _, expired = api_key_create(
            user=alice.user, name="old", expires_at=timezone.now() - dt.timedelta(seconds=1)
        )
        assert_error(make_client(expired).get(URL), 401, "unauthorized")

    def test_key_is_stored_hashed_and_last_used_recorded(self, alice):
        key = ApiKey.objects.get(prefix=alice.key.split("_")[1])
        assert alice.key not in key.key_hash and len(key.key_hash) == 64
        alice.client.get(URL)
        key.refresh_from_db()
        assert key.last_used_at is not None

    def test_read_key_cannot_write(self, alice):
        assert alice.read_client.get(URL).status_code == 200
        r = alice.read_client.post(URL, {"transaction": {}}, format="json")
        assert_error(r, 403, "insufficient_scope")


@pytest.mark.django_db
class TestErrorShape:
    def test_unknown_routes_are_json_404(self, alice, anon):
        for path in ("/api/v1/nope", "/api/v2/transactions", "/api/", "/api/v1/transactions/x/y"):
            assert_error(alice.client.get(path), 404, "not_found")
        assert_error(anon.get("/api/v1/nope"), 404, "not_found")

    def test_method_not_allowed(self, alice):
        assert_error(alice.client.delete(URL), 405, "method_not_allowed")

    def test_unsupported_media_type(self, alice):
        r = alice.client.post(URL, "x", content_type="text/plain")
        assert_error(r, 415, "unsupported_media_type")

    def test_oversized_body_is_413(self, alice, settings):
        settings.API_MAX_BODY_BYTES = 100
        r = alice.client.post(URL, {"transaction": {"name": "x" * 200}}, format="json")
        assert_error(r, 413, "payload_too_large")

    def test_rate_limit(self, alice, settings):
        settings.API_RATE_LIMIT = 2
        from django.core.cache import cache

        cache.clear()
        assert alice.client.get(URL)["X-RateLimit-Remaining"] == "1"
        alice.client.get(URL)
        r = alice.client.get(URL)
        body = assert_error(r, 429, "rate_limited")
        assert int(r["Retry-After"]) >= 1
        assert body["details"]["limit"] == 2 and "reset" in body["details"]


@pytest.mark.django_db
def test_healthz(client):
    r = client.get("/healthz")
    assert r.status_code == 200, r.content
    assert r.json()["checks"]["database"]["ok"] is True


@pytest.mark.django_db
def test_unrouted_writes_are_json_404_even_with_csrf_checks(alice):
    from django.test import Client

    client = Client(enforce_csrf_checks=True, HTTP_X_API_KEY=alice.key)
    for method in ("post", "patch", "delete"):
        r = getattr(client, method)("/api/v1/nope/x", data="{}", content_type="application/json")
        assert_error(r, 404, "not_found")


@pytest.mark.django_db
def test_a_bug_answers_json_500_with_a_request_id_and_no_internals(alice, monkeypatch, caplog):
    from django.test import Client

    def boom(**kwargs):
        raise RuntimeError("secret internals")

    from finance.views.transactions import TransactionViewSet

    monkeypatch.setattr(TransactionViewSet, "selector", staticmethod(boom))
    client = Client(raise_request_exception=False, HTTP_X_API_KEY=alice.key)
    r = client.get(URL)
    assert r.status_code == 500
    body = r.json()
    assert body["error"] == "internal_error"
    assert body["details"]["request_id"] == r["X-Request-Id"]
    assert "secret internals" not in r.content.decode()
    assert any(body["details"]["request_id"] in rec.getMessage() for rec in caplog.records)
