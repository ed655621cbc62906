"""Statement files that cannot be read end as a failed import whose error names the line:
external entities, entity bombs, truncated files, binary junk, the wrong format for the type.
Never a 500, nothing parsed, nothing written, no file content leaked."""

from __future__ import annotations

import pytest

from finance.models import Transaction
from imports.models import Import, ImportRow, ImportStatement
from tests.conftest import assert_error
from tests.imports.statement_helpers import fixture, upload

pytestmark = pytest.mark.django_db
JUNK = bytes(range(256)) * 8 + b"\x00\xff" * 100

# (type, file name, content, what the error says)
REFUSED = [
    (
        "Camt053Import",
        "xxe.xml",
        fixture("camt053_external_entity.xml"),
        "line 5: the DOCTYPE (DTD) before this root element is refused",
    ),
    (
        "Camt053Import",
        "lol.xml",
        fixture("camt053_billion_laughs.xml"),
        "line 14: the DOCTYPE (DTD) before this root element is refused",
    ),
    (
        "OfxImport",
        "xxe.ofx",
        fixture("ofx211_external_entity.ofx"),
        "line 3: DTD and entity declarations are refused",
    ),
    (
        "Camt053Import",
        "cut.xml",
        fixture("camt053_v02_batch.xml")[:5000],
        "not well-formed XML",
    ),
    (
        "OfxImport",
        "cut.ofx",
        fixture("ofx102_checking.ofx")[:1500],
        "line 93: the file ends inside <STMTRS> opened at line 34: truncated?",
    ),
    (
        "OfxImport",
        "cut.ofx",
        fixture("ofx211_creditcard.ofx")[:1900],
        "truncated?",
    ),
    (
        "Mt940Import",
        "cut.sta",
        fixture("mt940_two_accounts.sta")[:600],
        "line 2: the file ends before this statement's closing balance :62F:: truncated?",
    ),
    (
        "QifImport",
        "cut.qif",
        fixture("qif_us_checking.qif")[:300],
        "line 30: the file ends inside the record started at line 30 (no closing ^)",
    ),
    ("OfxImport", "junk.ofx", JUNK, "line 1: not an OFX file"),
    ("QifImport", "junk.qif", JUNK, "line 1: not a QIF file"),
    ("Camt053Import", "junk.xml", JUNK, "line 1: not well-formed XML"),
    ("Mt940Import", "junk.sta", JUNK, "line 1: not an MT940 file"),
    ("OfxImport", "bank.csv", b"date,name,amount\n2024-01-01,A,1\n", "line 1: not an OFX file"),
    (
        "Camt053Import",
        "card.ofx",
        fixture("ofx211_creditcard.ofx"),
        "not a CAMT file: the root element is 'OFX'",
    ),
    ("Mt940Import", "s.qif", fixture("qif_us_checking.qif"), "not an MT940 file"),
    ("QifImport", "s.sta", fixture("mt940_two_accounts.sta"), "line 1: not a QIF file"),
    (
        "Camt053Import",
        "camt052.xml",
        fixture("camt053_v02_batch.xml").replace(b"camt.053.001.02", b"camt.052.001.02"),
        "line 2: a camt.052 message, not a camt.053 statement",
    ),
]


@pytest.mark.parametrize(("import_type", "name", "content", "says"), REFUSED)
def test_unreadable_statement_file_is_a_failed_import_naming_the_place(
    alice, import_type, name, content, says
):
    account = alice.account(currency="EUR")
    resp = upload(alice.client, content, name, import_type, account_id=str(account.pk))
    assert resp.status_code == 201, resp.content
    data = resp.json()["data"]
    assert data["status"] == "failed"
    assert data["error"].startswith("The file cannot be read: ")
    assert says in data["error"], data["error"]
    assert "root:" not in resp.content.decode()  # nothing of /etc/passwd
    assert data["stats"]["rows_count"] == 0
    assert not ImportRow.objects.exists() and not ImportStatement.objects.exists()
    body = assert_error(alice.client.post(f"/api/v1/imports/{data['id']}/publish"), 409, "conflict")
    assert "no rows" in body["message"]
    assert Transaction.objects.count() == 0
    listed = alice.client.get("/api/v1/imports", {"status": "failed"}).json()["data"]
    assert [i["id"] for i in listed] == [data["id"]]


def test_large_truncated_file_fails_in_the_worker(
    alice, settings, django_capture_on_commit_callbacks
):
    settings.IMPORT_SYNC_PARSE_BYTES = 1000
    content = fixture("camt053_v02_batch.xml")[:6000]
    with django_capture_on_commit_callbacks(execute=True):
        resp = upload(alice.client, content, "big.xml", "Camt053Import", publish="true")
    assert resp.status_code == 202, resp.content
    data = alice.client.get(f"/api/v1/imports/{resp.json()['data']['id']}").json()["data"]
    assert (data["status"], data["parsing"]) == ("failed", False)
    assert "not well-formed XML" in data["error"] and "line" in data["error"]
    assert Transaction.objects.count() == 0


def test_large_statement_file_is_parsed_and_published_by_the_worker(
    alice, settings, django_capture_on_commit_callbacks
):
    settings.IMPORT_SYNC_PARSE_BYTES = 1000
    account = alice.account(currency="EUR")
    with django_capture_on_commit_callbacks(execute=True):
        resp = upload(
            alice.client,
            fixture("camt053_v02_batch.xml"),
            "big.xml",
            "Camt053Import",
            account_id=str(account.pk),
            publish="true",
        )
    assert resp.status_code == 202, resp.content
    assert resp.json()["data"]["parsing"] is True
    data = alice.client.get(f"/api/v1/imports/{resp.json()['data']['id']}").json()["data"]
    assert data["status"] == "complete", data
    assert data["verification"]["readback"]["status"] == "matched"
    assert Transaction.objects.filter(account=account).count() == 6


def test_oversized_statement_file_is_413_and_unknown_type_422(alice, settings):
    settings.IMPORT_MAX_UPLOAD_BYTES = 100
    resp = upload(alice.client, fixture("ofx102_checking.ofx"), "s.ofx", "OfxImport")
    assert assert_error(resp, 413, "payload_too_large")["details"]["limit_bytes"] == 100
    settings.IMPORT_MAX_UPLOAD_BYTES = 10_000_000
    resp = upload(alice.client, fixture("ofx102_checking.ofx"), "s.ofx", "PdfImport")
    assert "type" in assert_error(resp, 422, "validation_failed")["message"]
    assert not Import.objects.exists()
