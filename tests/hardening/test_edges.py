"""Edges met in-process: every free-text field of a request is bounded (a 422 naming it), the
OpenAPI document offers only the media types the API reads, an import's readback counts are
objects from the start, query-string secrets are redacted by the log filter, and the shared
counters of the embedded default are one count for every process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from finance.logging import RedactSecretsFilter, redact
from tests.conftest import assert_error

ROOT = Path(__file__).resolve().parents[2]
NOTES = 10_000


def notes_error(response, field: str) -> None:
    body = assert_error(response, 422, "validation_failed")
    assert any(e.startswith(f"{field}:") for e in body["errors"]), body


@pytest.mark.django_db
class TestLengthLimits:
    def test_transaction_notes(self, alice):
        account = alice.account()
        txn = {"account_id": str(account.pk), "date": "2024-01-02", "amount": "5", "name": "x"}
        url = "/api/v1/transactions"
        r = alice.client.post(url, {"transaction": {**txn, "notes": "n" * NOTES}}, format="json")
        assert r.status_code == 201, r.content
        long = {"transaction": {**txn, "notes": "n" * (NOTES + 1)}}
        notes_error(alice.client.post(url, long, format="json"), "transaction.notes")
        patch = {"transaction": {"notes": "n" * (NOTES + 1)}}
        notes_error(
            alice.client.patch(f"{url}/{r.json()['id']}", patch, format="json"),
            "transaction.notes",
        )

    def test_bulk_item_notes(self, alice):
        account = alice.account()
        item = {"account_id": str(account.pk), "date": "2024-01-02", "amount": "5", "name": "x"}
        body = {"transactions": [item, {**item, "notes": "n" * (NOTES + 1)}]}
        r = alice.client.post("/api/v1/transactions/bulk", body, format="json")
        assert r.status_code == 200, r.content
        ok, bad = r.json()["results"]
        assert ok["status"] == 201 and bad["status"] == 422
        assert any(e.startswith("notes:") for e in bad["errors"]), bad

    def test_trade_notes(self, alice):
        from tests.factories import AccountFactory

        account = AccountFactory(family=alice.family, account_type="investment")
        trade = {"account_id": str(account.pk), "date": "2024-05-02", "type": "deposit"}
        body = {"trade": {**trade, "amount": "10", "notes": "n" * (NOTES + 1)}}
        notes_error(alice.client.post("/api/v1/trades", body, format="json"), "trade.notes")

    def test_import_configuration_and_mapping_values(self, alice):
        url = "/api/v1/imports"
        body = {"raw_file_content": "date,name,amount,category\n2024-01-01,a,1,Food\n"}
        notes_error(
            alice.client.post(url, {**body, "name_col_label": "l" * 256}, format="json"),
            "name_col_label",
        )
        r = alice.client.post(url, body, format="json")
        assert r.status_code == 201, r.content
        imp = r.json()["data"]["id"]
        notes_error(
            alice.client.patch(f"{url}/{imp}", {"date_format": "d" * 256}, format="json"),
            "date_format",
        )
        change = {"kind": "category", "value": "v" * 256, "create_new": True}
        r = alice.client.patch(f"{url}/{imp}/mappings", {"mappings": [change]}, format="json")
        body = assert_error(r, 422, "validation_failed")
        assert any("value" in e and "255" in e for e in body["errors"]), body

    def test_provider_credentials(self, alice):
        url = "/api/v1/provider_connections"
        cases = [
            ({"provider": "lunchflow", "api_key": "k" * 1025}, "api_key"),
            ({"provider": "simplefin", "setup_token": "t" * 2049}, "setup_token"),
            ({"provider": "p" * 65, "api_key": "k"}, "provider"),
        ]
        for body, field in cases:
            notes_error(alice.client.post(url, body, format="json"), field)


def _request_bodies(schema: dict) -> list[tuple[str, str, str, dict]]:
    return [
        (method.upper(), path, media, content["schema"])
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if isinstance(op, dict) and "requestBody" in op
        for media, content in op["requestBody"]["content"].items()
    ]


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from rest_framework.test import APIClient

    with django_db_blocker.unblock():
        response = APIClient().get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_request_bodies_are_json_and_only_the_upload_is_multipart(schema):
    media = {(method, path): set() for method, path, _, _ in _request_bodies(schema)}
    for method, path, kind, _ in _request_bodies(schema):
        media[(method, path)].add(kind)
    assert media[("POST", "/api/v1/imports")] == {"application/json", "multipart/form-data"}
    # a restore's archive is a file upload only (docs/decisions.md "Export and restore")
    assert media[("POST", "/api/v1/restores")] == {"multipart/form-data"}
    uploads = {("POST", "/api/v1/imports"), ("POST", "/api/v1/restores")}
    others = {key: kinds for key, kinds in media.items() if key not in uploads}
    assert others and all(kinds == {"application/json"} for kinds in others.values()), others


def test_every_free_text_request_field_has_a_maximum_length(schema):
    components = schema["components"]["schemas"]
    unbounded = []

    def walk(node: dict, where: str, seen: frozenset) -> None:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name not in seen:
                walk(components[name], where, seen | {name})
            return
        for sub in node.get("allOf", []) + node.get("oneOf", []) + node.get("anyOf", []):
            walk(sub, where, seen)
        for name, prop in node.get("properties", {}).items():
            if not prop.get("readOnly"):
                walk(prop, f"{where}.{name}", seen)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{where}.*", seen)
        if node.get("type") == "array":
            walk(node.get("items", {}), f"{where}[]", seen)
        free_text = node.get("type") == "string" and not {"enum", "format", "pattern"} & set(node)
        if free_text and "maxLength" not in node:
            unbounded.append(where)

    for method, path, media, body in _request_bodies(schema):
        walk(body, f"{method} {path} {media}", frozenset())
    # The CSV as text is bounded by the upload limit (a 413, like the file).
    assert [u for u in unbounded if not u.endswith(".raw_file_content")] == []


@pytest.mark.django_db
def test_form_bodies_are_refused_as_unsupported(alice):
    r = alice.client.post("/api/v1/accounts", {"name": "x"}, format="multipart")
    assert_error(r, 415, "unsupported_media_type")
    r = alice.client.post(
        "/api/v1/accounts", "name=x", content_type="application/x-www-form-urlencoded"
    )
    assert_error(r, 415, "unsupported_media_type")


@pytest.mark.django_db
def test_an_unverified_import_has_empty_count_objects(alice):
    body = {"raw_file_content": "date,name,amount\n2024-01-01,a,1\n"}
    r = alice.client.post("/api/v1/imports", body, format="json")
    assert r.status_code == 201, r.content
    again = alice.client.get(f"/api/v1/imports/{r.json()['data']['id']}")
    for data in (r.json()["data"], again.json()["data"]):
        assert data["verification"]["expected_record_counts"]["transactions"] == 1
        readback = data["verification"]["readback"]
        assert readback["status"] == "not_verified"
        for key in (
            "expected_record_counts",
            "before_counts",
            "after_counts",
            "actual_delta_counts",
            "checked_counts",
            "mismatches",
        ):
            assert readback[key] == {}, key
        assert readback["checked_at"] is None and readback["error"] is None


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("GET /api/v1/accounts?api_key=pfk_abcdefgh_S3cretValue HTTP/1.1", "S3cretValue"),
        ("GET /api/v1/accounts?page=2&token=S3cretToken HTTP/1.1", "S3cretToken"),
        ("GET /x?api%5Fkey=S3cretEncoded HTTP/1.1", "S3cretEncoded"),
        ("GET /x?a=1;setup_token=S3cretSetup", "S3cretSetup"),
        ("GET /x?access_url=https%3A%2F%2Fu%3AS3cretPw%40h%2Fsf", "S3cretPw"),
        ("GET /x?KEY=S3cretUpper&y=2", "S3cretUpper"),
    ],
)
def test_the_log_filter_redacts_query_string_secrets(line, secret):
    assert secret not in redact(line)
    import logging

    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "%s", (line,), None)
    assert RedactSecretsFilter().filter(record)
    assert secret not in record.getMessage() and "[REDACTED]" in record.getMessage()


def test_other_query_parameters_are_left_alone():
    line = "GET /api/v1/transactions?search=key%3Dv&monkey=1&page=2 HTTP/1.1"
    assert redact(line) == line


COUNT = """
import json, sys
from config.cache import count_hit
key, hits = sys.argv[1], int(sys.argv[2])
print(json.dumps([count_hit(key, timeout=600) for _ in range(hits)]))
"""


def _count_in_processes(env: dict[str, str], processes: int, hits: int) -> list[int]:
    key = f"edges:{uuid.uuid4().hex}"
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_URL")}
    env = {**base, "DJANGO_SETTINGS_MODULE": "config.settings.base", **env}
    code = "import django; django.setup()\n" + COUNT
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, key, str(hits)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    seen: list[int] = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
        seen += json.loads(out)
    return seen


def test_the_embedded_cache_counts_once_across_processes(tmp_path):
    """Three processes hit one counter 300 times each at the same moment: every value from 1
    to 900 is handed out exactly once (no two processes read the same count)."""
    seen = _count_in_processes({"DATA_DIR": str(tmp_path)}, processes=3, hits=300)
    assert sorted(seen) == list(range(1, 901))
    assert (tmp_path / "cache").is_dir()


def _redis_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), 1).close()
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _redis_up(), reason="Redis is not running on 127.0.0.1:6379")
def test_redis_counts_once_across_processes_when_cache_url_says_so():
    seen = _count_in_processes({"CACHE_URL": "redis://127.0.0.1:6379/14"}, processes=3, hits=300)
    assert sorted(seen) == list(range(1, 901))


def test_the_default_cache_is_the_shared_file_cache_under_data_dir(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "DATABASE_URL")}
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.CACHES['default']['BACKEND'], settings.CACHES['default']['LOCATION'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings.base", "DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["config.cache.SharedFileCache", str(tmp_path / "cache")]


def test_the_shared_file_cache_keeps_django_cache_semantics(tmp_path):
    from config.cache import SharedFileCache

    cache = SharedFileCache(str(tmp_path), {"OPTIONS": {"MAX_ENTRIES": 3}})
    assert cache.add("a", 1, timeout=60) and not cache.add("a", 5, timeout=60)
    assert cache.incr("a") == 2 and cache.incr("a", 3) == 5 and cache.get("a") == 5
    with pytest.raises(ValueError):
        cache.incr("missing")
    cache.set("b", {"nested": [1, 2]}, timeout=60)
    assert cache.get("b") == {"nested": [1, 2]} and cache.has_key("b")
    for key in ("x", "y"):  # written already expired
        cache.add(key, 1, timeout=0)
    with pytest.raises(ValueError):
        cache.incr("x")
    assert not cache.has_key("y") and cache.get("y", "default") == "default"
    cache.add("old-1", 1, timeout=0)
    cache.add("old-2", 1, timeout=0)
    # Full: the next new entry makes room by dropping the expired entries, not live counters.
    assert cache.add("c", 1, timeout=60)
    assert [cache.get(k) for k in ("a", "b", "c")] == [5, {"nested": [1, 2]}, 1]
    assert len(list(tmp_path.glob("*.djcache"))) == 3
    assert cache.delete("a") and cache.get("a") is None
    cache.clear()
    assert list(tmp_path.glob("*.djcache")) == []
