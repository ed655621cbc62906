"""Export and restore over HTTP (issue 23; docs/decisions.md "Export and restore")."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from exports import reader
from exports.models import Export
from exports.selectors import KINDS
from finance.models import Account, ApiKey, Category, Transaction
from providers.models import ProviderConnection
from tests.conftest import assert_error, make_household
from tests.exports.helpers import (
    PROVIDER_SECRET,
    build_rich_household,
    canonical,
    ok,
    post,
    read_archive,
    txn,
)

pytestmark = pytest.mark.django_db


def export_bytes(household, capture) -> tuple[dict, bytes]:
    with capture(execute=True):
        started = ok(household.client.post("/api/v1/exports"), 202)
    assert set(started) == {"id", "status"} and started["status"] == "pending"
    export = ok(household.client.get(f"/api/v1/exports/{started['id']}"), 200)
    assert export["status"] == "complete", export
    assert export["download_url"] == (
        f"http://testserver/api/v1/exports/{started['id']}/download"
    )  # absolute: a client follows it as it is
    response = household.client.get(export["download_url"])
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    stamp = Export.objects.get(pk=started["id"]).created_at.strftime("%Y%m%d-%H%M%S")
    disposition = f'attachment; filename="household-export-{stamp}.zip"'
    assert response["Content-Disposition"] == disposition
    assert response.streaming  # a FileResponse, read in blocks, never whole in memory
    data = b"".join(response.streaming_content)
    assert export["size_bytes"] == len(data)
    return export, data


def restore(household, capture, data: bytes, name: str = "export.zip"):
    upload = SimpleUploadedFile(name, data, content_type="application/zip")
    with capture(execute=True):
        return household.client.post("/api/v1/restores", {"file": upload}, format="multipart")


def test_a_rich_household_round_trips_record_by_record(alice, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    build_rich_household(alice, capture)
    # WHEN alice exports
    export, data = export_bytes(alice, capture)
    manifest, records, csv_bytes = read_archive(data)
    # THEN the manifest describes every file, with its count and checksum
    assert manifest["format"] == "pf-export" and manifest["version"] == 1
    assert manifest["currency"] == alice.family.currency and manifest["created_at"]
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for name, digest in manifest["sha256"].items():
            assert hashlib.sha256(archive.read(name)).hexdigest() == digest
    for kind in KINDS:
        assert manifest["counts"][f"{kind}.jsonl"] == len(records[kind]) == export["counts"][kind]
        assert records[kind] or kind in ("exchange_rates",), kind
    assert len(records["transactions"]) == Transaction.objects.filter(family=alice.family).count()
    assert csv_bytes.decode().splitlines()[0].startswith("id,date,account,amount")
    # the API's own representation: a transaction line is what GET /transactions/{id} answers
    one = records["transactions"][0]
    api = ok(alice.client.get(f"/api/v1/transactions/{one['id']}"), 200)
    api = api.get("transaction", api)
    assert {k: one[k] for k in api} == api
    assert {t["status"] for t in records["transfers"]} == {"confirmed"}
    assert len(records["rejected_transfers"]) == 1
    assert {c["name"]: c["parent_id"] for c in records["categories"]}["Groceries"]
    # AND no secret is in it: no API key, no provider credential, no encrypted token
    connection = ProviderConnection.objects.get(family=alice.family)
    secrets = [PROVIDER_SECRET, connection.credential_encrypted, alice.key, alice.read_key]
    secrets += list(ApiKey.objects.values_list("key_hash", flat=True))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        everything = b"".join(archive.read(name) for name in archive.namelist())
    for secret in secrets:
        assert secret.encode() not in everything and secret.encode() not in data

    # WHEN it is restored into a new household
    bob = make_household("bob")
    accepted = ok(restore(bob, capture, data), 202)
    done = ok(bob.client.get(f"/api/v1/restores/{accepted['id']}"), 200)
    # THEN the readback matched counts per kind and sums per account
    assert done["status"] == "complete", done
    assert done["readback"]["status"] == "matched"
    assert done["readback"]["actual_counts"] == {k: len(records[k]) for k in KINDS}
    assert len(done["readback"]["sums"]) >= 5
    # AND its records are alice's, field for field, ids aside, every reference rebuilt
    _, bob_records, _ = read_archive(export_bytes(bob, capture)[1])
    assert canonical(bob_records) == canonical(records)
    assert not {r["id"] for r in records["transactions"]} & {
        r["id"] for r in bob_records["transactions"]
    }
    # connections come back listed, waiting for new credentials
    (back,) = bob_records["provider_connections"]
    assert back["status"] == "requires_update" and len(back["accounts"]) == 1
    girokonto = next(a for a in bob_records["accounts"] if a["name"] == "Girokonto")
    assert back["accounts"][0]["account_id"] == girokonto["id"]
    assert ok(bob.client.get("/api/v1/accounts"), 200)
    alice_balances = {a["name"]: a["balance"] for a in records["accounts"]}
    assert {a["name"]: a["balance"] for a in bob_records["accounts"]} == alice_balances


def test_a_tampered_archive_is_refused_with_nothing_written(
    alice, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    build_rich_household(alice, capture)
    _, data = export_bytes(alice, capture)
    bob = make_household("bob")
    # one amount changed, the archive otherwise intact (a valid zip, the old checksum)
    tampered = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(tampered, "w") as out:
        for item in source.infolist():
            body = source.read(item.filename)
            if item.filename == "transactions.jsonl":
                body = body.replace(b'"amount":"42.10"', b'"amount":"4.10"', 1)
                assert b'"4.10"' in body
            out.writestr(item.filename, body)
    body = assert_error(restore(bob, capture, tampered.getvalue()), 422, "validation_failed")
    assert any("transactions.jsonl" in e and "SHA-256" in e for e in body["errors"]), body
    # a flipped byte in the compressed data
    corrupt = bytearray(data)
    corrupt[len(corrupt) // 3] ^= 0xFF
    assert_error(restore(bob, capture, bytes(corrupt)), 422, "validation_failed")
    # not a zip at all
    body = assert_error(
        restore(bob, capture, b"date,amount\n2024-01-01,1\n", "x.csv"), 422, "validation_failed"
    )
    assert body["errors"] == [reader.NOT_A_ZIP]
    # a zip of another format
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as out:
        out.writestr("manifest.json", json.dumps({"format": "other", "version": 1}))
    body = assert_error(restore(bob, capture, other.getvalue()), 422, "validation_failed")
    assert body["errors"] == [reader.WRONG_FORMAT]
    # THEN nothing was written
    assert not Account.objects.filter(family=bob.family).exists()
    assert not Category.objects.filter(family=bob.family).exists()
    assert not bob.family.restores.exists()


def test_restore_into_a_household_with_accounts_is_a_conflict(
    alice, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    build_rich_household(alice, capture)
    _, data = export_bytes(alice, capture)
    before = Transaction.objects.filter(family=alice.family).count()
    assert_error(restore(alice, capture, data), 409, "conflict")
    assert Transaction.objects.filter(family=alice.family).count() == before
    assert not alice.family.restores.exists()


def test_another_households_export_and_restore_are_invisible(
    alice, charlie, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    alice.account(name="Cash")
    export, data = export_bytes(alice, capture)
    assert_error(charlie.client.get(f"/api/v1/exports/{export['id']}"), 404, "not_found")
    assert_error(charlie.client.get(f"/api/v1/exports/{export['id']}/download"), 404, "not_found")
    accepted = ok(restore(charlie, capture, data), 202)
    assert_error(alice.client.get(f"/api/v1/restores/{accepted['id']}"), 404, "not_found")
    assert_error(alice.client.get("/api/v1/exports/not-a-uuid"), 404, "not_found")


def test_a_read_key_cannot_start_an_export_or_a_restore(alice):
    assert_error(alice.read_client.post("/api/v1/exports"), 403, "insufficient_scope")
    upload = SimpleUploadedFile("export.zip", b"PK\x05\x06" + b"\0" * 18)
    r = alice.read_client.post("/api/v1/restores", {"file": upload}, format="multipart")
    assert_error(r, 403, "insufficient_scope")
    assert not alice.family.exports.exists() and not alice.family.restores.exists()


def test_a_restore_that_fails_midway_keeps_nothing(alice, django_capture_on_commit_callbacks):
    """The manifest's sums are not covered by a checksum: an archive whose sums lie passes the
    verification, is written, fails its readback, and the whole transaction is rolled back."""
    capture = django_capture_on_commit_callbacks
    build_rich_household(alice, capture)
    _, data = export_bytes(alice, capture)
    lying = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(lying, "w") as out:
        for item in source.infolist():
            body = source.read(item.filename)
            if item.filename == "manifest.json":
                manifest = json.loads(body)
                key = next(iter(manifest["sums"]))
                manifest["sums"][key] = "123456.78"
                body = json.dumps(manifest).encode()
            out.writestr(item.filename, body)
    bob = make_household("bob")
    accepted = ok(restore(bob, capture, lying.getvalue()), 202)
    done = ok(bob.client.get(f"/api/v1/restores/{accepted['id']}"), 200)
    assert done["status"] == "failed" and "nothing was kept" in done["error"]
    assert done["readback"]["status"] == "mismatch" and "sums" in done["readback"]["mismatches"]
    assert not Account.objects.filter(family=bob.family).exists()
    assert not Transaction.objects.filter(family=bob.family).exists()
    assert not Category.objects.filter(family=bob.family).exists()
    assert not ProviderConnection.objects.filter(family=bob.family).exists()


def test_a_restore_larger_than_its_limit_is_refused(alice, settings):
    settings.RESTORE_MAX_UPLOAD_BYTES = 1000
    upload = SimpleUploadedFile("big.zip", b"x" * 5000, content_type="application/zip")
    r = alice.client.post("/api/v1/restores", {"file": upload}, format="multipart")
    assert_error(r, 413, "payload_too_large")
    assert not alice.family.restores.exists()


def test_amounts_finer_than_the_currency_come_back_exactly(
    alice, django_capture_on_commit_callbacks
):
    """The API shows amounts at the currency's precision; the archive keeps the stored one, so
    a JPY trade of 3 at 12.5 (37.5) and a USD row of 12.3456 leave the balances as they were."""
    capture = django_capture_on_commit_callbacks
    broker = post(
        alice, "/api/v1/accounts",
        {"account": {"name": "Broker", "currency": "JPY", "account_type": "investment"}},
    )  # fmt: skip
    wallet = post(alice, "/api/v1/accounts", {"account": {"name": "Wallet", "currency": "USD"}})
    body = {"account_id": broker["id"], "date": "2024-03-05", "ticker": "VTI", "qty": 3}
    post(alice, "/api/v1/trades", {"trade": {**body, "price": "12.5"}})
    txn(alice, wallet, "2024-03-06", "12.3456", "Fine")
    before = {
        a.name: (a.balance, a.holdings_value) for a in Account.objects.filter(family=alice.family)
    }
    _, data = export_bytes(alice, capture)
    target = make_household("finer")
    started = ok(restore(target, capture, data), 202)
    restored = ok(target.client.get(f"/api/v1/restores/{started['id']}"), 200)
    assert restored["status"] == "complete", restored
    after = {
        a.name: (a.balance, a.holdings_value) for a in Account.objects.filter(family=target.family)
    }
    assert after == before
    assert before["Wallet"][0] == Decimal("-12.3456")
