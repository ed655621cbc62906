"""Imports over HTTP with bank-style CSVs: upload, read back row by row, publish, re-publish,
revert, malformed files."""

from __future__ import annotations

import contextlib
import datetime as dt
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from finance.models import Account, AccountBalance, Category, Tag, Transaction
from imports.models import Import
from tests.conftest import assert_error
from tests.factories import CategoryFactory

pytestmark = pytest.mark.django_db

EUROPEAN = (
    "\ufeffBuchungstag;Verwendungszweck;Betrag;Kategorie\r\n"
    "02.01.2024;REWE Markt;-45,20;Lebensmittel\r\n"
    "03.01.2024;Gehalt;2.500,00;Einkommen\r\n"
    "04.01.2024;Kaffee;-3,50;\r\n"
    "04.01.2024;Kaffee;-3,50;\r\n"
    "05.01.2024;Miete;-1.100,00;Wohnen\r\n"
).encode()

WINDOWS_1252 = (
    "Date,Description,Amount,Tags\r\n"
    "2024-02-01,Café Müller,(12.50),food|coffee\r\n"
    "2024-02-02,Bäckerei Grüße,-4.20,food\r\n"
    "2024-02-03,Refund Señor,25.00,\r\n"
).encode("cp1252")


def upload(client, content: bytes, name: str = "bank.csv", **fields):
    data = {"file": SimpleUploadedFile(name, content, content_type="text/csv"), **fields}
    return client.post("/api/v1/imports", data, format="multipart")


def rows(client, import_id: str, **params) -> list[dict]:
    resp = client.get(f"/api/v1/imports/{import_id}/rows", {"per_page": 100, **params})
    assert resp.status_code == 200, resp.content
    return resp.json()["data"]


def publish(client, import_id: str, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        resp = client.post(f"/api/v1/imports/{import_id}/publish")
    assert resp.status_code == 202, resp.content
    return client.get(f"/api/v1/imports/{import_id}").json()["data"]


def revert(client, import_id: str, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        resp = client.post(f"/api/v1/imports/{import_id}/revert")
    assert resp.status_code == 202, resp.content
    return client.get(f"/api/v1/imports/{import_id}").json()["data"]


def ledger(account) -> list[tuple]:
    return sorted(
        Transaction.objects.filter(account=account).values_list(
            "id", "date", "amount", "currency", "name", "category_id"
        )
    )


def balances(account) -> list[tuple]:
    return list(AccountBalance.objects.filter(account=account).values_list("date", "balance"))


def european_import(alice, account):
    return upload(
        alice.client,
        EUROPEAN,
        account_id=str(account.pk),
        date_col_label="Buchungstag",
        name_col_label="Verwendungszweck",
        amount_col_label="Betrag",
        category_col_label="Kategorie",
        date_format="%d.%m.%Y",
        number_format="1.234,56",
    )


def test_european_semicolon_bom_file_reads_back_row_by_row(alice):
    account = alice.account(currency="EUR")
    resp = european_import(alice, account)
    assert resp.status_code == 201, resp.content
    data = resp.json()["data"]
    assert data["status"] == "pending"
    assert data["type"] == "TransactionImport"
    assert data["configuration"]["col_sep"] == ";"
    assert data["stats"]["rows_count"] == 5
    assert data["stats"]["invalid_rows_count"] == 0
    assert data["status_detail"] == {
        "uploaded": True,
        "configured": True,
        "terminal": False,
        "cleaned": True,
        "publishable": True,
        "revertable": False,
    }
    got = [
        (r["row_number"], r["date"], r["amount"], r["currency"], r["name"], r["category"])
        for r in rows(alice.client, data["id"])
    ]
    # inflows_positive (the default): a positive file amount is money entering = negative.
    assert got == [
        (2, "2024-01-02", "45.20", "EUR", "REWE Markt", "Lebensmittel"),
        (3, "2024-01-03", "-2500.00", "EUR", "Gehalt", "Einkommen"),
        (4, "2024-01-04", "3.50", "EUR", "Kaffee", None),
        (5, "2024-01-04", "3.50", "EUR", "Kaffee", None),
        (6, "2024-01-05", "1100.00", "EUR", "Miete", "Wohnen"),
    ]
    first = rows(alice.client, data["id"])[0]
    assert first["raw"] == {
        "Buchungstag": "02.01.2024",
        "Verwendungszweck": "REWE Markt",
        "Betrag": "-45,20",
        "Kategorie": "Lebensmittel",
    }


def test_uploaded_says_whether_a_file_is_stored_on_the_list_and_the_detail(alice):
    """`status_detail.uploaded` as read back from the database (a stored name, not a FieldFile)."""
    resp = european_import(alice, alice.account(currency="EUR"))
    with_file = resp.json()["data"]["id"]
    without = str(Import.objects.create(family=alice.family).pk)
    listed = alice.client.get("/api/v1/imports").json()["data"]
    assert {i["id"]: i["status_detail"]["uploaded"] for i in listed} == {
        with_file: True,
        without: False,
    }
    for pk, uploaded in ((with_file, True), (without, False)):
        detail = alice.client.get(f"/api/v1/imports/{pk}").json()["data"]
        assert detail["status_detail"]["uploaded"] is uploaded


def test_publish_verify_republish_revert(alice, django_capture_on_commit_callbacks):
    account = alice.account(currency="EUR")
    groceries = CategoryFactory(family=alice.family, name="Lebensmittel")
    before_txn = Transaction.objects.create(
        family=alice.family,
        account=account,
        date=dt.date(2023, 12, 31),
        amount=Decimal("9"),
        currency="EUR",
        name="Earlier",
        source="api",
        external_id="x1",
    )
    from tests.factories import ledger_derive

    ledger_derive(alice.family, {account.pk: None})
    before = ledger(account)
    balances_before = balances(account)
    assert balances_before  # the earlier transaction has a daily balance series
    data = european_import(alice, account).json()["data"]
    mappings = alice.client.get(f"/api/v1/imports/{data['id']}/mappings").json()["data"]
    by_value = {m["value"]: m for m in mappings}
    assert by_value["Lebensmittel"]["target_id"] == str(groceries.pk)
    assert by_value["Wohnen"]["create_new"] is True

    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert done["status"] == "complete", done
    readback = done["verification"]["readback"]
    assert readback["status"] == "matched", readback
    assert readback["checked_counts"] == {
        "transactions": 5,
        "categories": 2,
        "tags": 0,
        "accounts": 0,
    }
    assert readback["actual_delta_counts"]["transactions"] == 5
    assert done["stats"]["rows_processed"] == 5
    assert done["status_detail"]["revertable"] is True
    kaffee = Transaction.objects.filter(account=account, name="Kaffee")
    assert kaffee.count() == 2  # identical rows are real repeats
    # Each row names the transaction it became.
    became = {r["row_number"]: r["transaction_id"] for r in rows(alice.client, data["id"])}
    created = {
        str(pk)
        for pk in Transaction.objects.filter(account=account, source="import").values_list(
            "pk", flat=True
        )
    }
    assert set(became.values()) == created and len(created) == 5
    assert became[2] == str(Transaction.objects.get(name="REWE Markt").pk)
    assert Transaction.objects.get(name="REWE Markt").category_id == groceries.pk
    account.refresh_from_db()
    assert account.balance == Decimal("9") * -1 + Decimal("2500") - Decimal("45.20") - 7 - 1100

    # The same file again: every row is a duplicate, nothing new.
    again = european_import(alice, account).json()["data"]
    assert again["stats"]["duplicates_count"] == 5
    second = publish(alice.client, again["id"], django_capture_on_commit_callbacks)
    assert second["status"] == "complete"
    assert second["verification"]["readback"]["status"] == "matched"
    assert second["verification"]["readback"]["checked_counts"]["transactions"] == 0
    assert {r["transaction_id"] for r in rows(alice.client, again["id"])} == {None}  # duplicates
    assert Transaction.objects.filter(account=account).count() == 6

    # Revert the first: exactly what it created goes, the earlier row stays.
    reverted = revert(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert reverted["status"] == "pending"
    assert reverted["verification"]["readback"]["status"] == "reverted"
    assert {r["transaction_id"] for r in rows(alice.client, data["id"])} == {None}
    assert ledger(account) == before
    assert balances(account) == balances_before
    assert Transaction.objects.filter(pk=before_txn.pk).exists()
    assert set(Category.objects.filter(family=alice.family).values_list("name", flat=True)) == {
        "Lebensmittel"
    }
    account.refresh_from_db()
    assert account.balance == Decimal("-9")


def test_windows_1252_parentheses_and_tags(alice, django_capture_on_commit_callbacks):
    account = alice.account(currency="USD")
    resp = upload(
        alice.client,
        WINDOWS_1252,
        account_id=str(account.pk),
        name_col_label="Description",
        signage_convention="inflows_positive",
    )
    assert resp.status_code == 201, resp.content
    data = resp.json()["data"]
    assert data["encoding"] != "utf-8-sig"
    got = [(r["name"], r["amount"], r["tags"]) for r in rows(alice.client, data["id"])]
    assert got == [
        ("Café Müller", "12.50", ["food", "coffee"]),
        ("Bäckerei Grüße", "4.20", ["food"]),
        ("Refund Señor", "-25.00", []),
    ]
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert done["verification"]["readback"]["status"] == "matched"
    cafe = Transaction.objects.get(name="Café Müller")
    assert sorted(cafe.tags.values_list("name", flat=True)) == ["coffee", "food"]
    assert Tag.objects.filter(family=alice.family).count() == 2


def test_malformed_file_has_row_errors_and_writes_nothing(
    alice, django_capture_on_commit_callbacks
):
    account = alice.account()
    content = (
        b"date,name,amount\n"
        b"2024-01-01,Shop,12.00\n"
        b"2024-13-01,Bad month,1.00\n"
        b"2024-01-02,,5\n"
        b"2024-01-03,Thousands,1.000,00\n"
        b"Total,,999\n"
    )
    data = upload(alice.client, content, account_id=str(account.pk)).json()["data"]
    assert data["stats"]["invalid_rows_count"] == 4
    assert data["status_detail"]["cleaned"] is False
    bad = rows(alice.client, data["id"], valid="false")
    errors = {r["row_number"]: r["errors"] for r in bad}
    assert set(errors) == {3, 4, 5, 6}
    assert any('column "date"' in e and "'2024-13-01'" in e for e in errors[3])
    assert any('column "name"' in e for e in errors[4])
    assert all(e.startswith(f"row {n}") for n, es in errors.items() for e in es)
    resp = alice.client.post(f"/api/v1/imports/{data['id']}/publish")
    body = assert_error(resp, 409, "conflict")
    assert "pending" in body["message"] and "invalid" in body["message"]
    assert Transaction.objects.count() == 0
    # Skipping junk rows makes the import publishable.
    for n in (3, 4, 5, 6):
        r = alice.client.patch(
            f"/api/v1/imports/{data['id']}/rows/{n}", {"skip": True}, format="json"
        )
        assert r.status_code == 200, r.content
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert done["verification"]["readback"]["status"] == "matched"
    assert Transaction.objects.count() == 1


def test_duplicate_of_transaction_from_elsewhere_and_force(
    alice, django_capture_on_commit_callbacks
):
    account = alice.account()
    existing = Transaction.objects.create(
        family=alice.family,
        account=account,
        date=dt.date(2024, 1, 1),
        amount=Decimal("3.50"),
        currency="USD",
        name="Coffee",
        source="api",
        external_id="api-1",
    )
    content = b"date,name,amount\n2024-01-01,Coffee,-3.50\n2024-01-01,Coffee,-3.50\n"
    data = upload(alice.client, content, account_id=str(account.pk)).json()["data"]
    assert data["stats"]["duplicates_count"] == 1
    got = rows(alice.client, data["id"])
    assert [(r["duplicate"], r["duplicate_of"]) for r in got] == [
        (True, str(existing.pk)),
        (False, None),
    ]
    r = alice.client.patch(f"/api/v1/imports/{data['id']}/rows/2", {"force": True}, format="json")
    assert r.json()["data"]["duplicate"] is False
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert done["verification"]["readback"]["status"] == "matched"
    assert Transaction.objects.filter(name="Coffee").count() == 3


def test_account_column_requires_mapping(alice, django_capture_on_commit_callbacks):
    checking = alice.account(name="Checking")
    content = b"date;name;amount;account\n2024-01-01;A;1;Checking\n2024-01-02;B;2;Savings\n"
    data = upload(alice.client, content).json()["data"]
    assert data["status_detail"]["publishable"] is False
    resp = alice.client.post(f"/api/v1/imports/{data['id']}/publish")
    assert_error(resp, 409, "conflict")
    maps = {
        m["value"]: m
        for m in alice.client.get(f"/api/v1/imports/{data['id']}/mappings").json()["data"]
    }
    assert maps["Checking"]["target_id"] == str(checking.pk)
    assert maps["Savings"]["resolved"] is False
    resp = alice.client.patch(
        f"/api/v1/imports/{data['id']}/mappings",
        {"mappings": [{"kind": "account", "value": "Savings", "create_new": True}]},
        format="json",
    )
    assert resp.status_code == 200, resp.content
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert done["verification"]["readback"]["status"] == "matched"
    savings = Account.objects.get(family=alice.family, name="Savings")
    assert savings.transactions.count() == 1
    revert(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert not Account.objects.filter(pk=savings.pk).exists()
    assert Account.objects.filter(pk=checking.pk).exists()


def test_raw_file_content_json_and_publish_true(alice, django_capture_on_commit_callbacks):
    account = alice.account()
    with django_capture_on_commit_callbacks(execute=True):
        resp = alice.client.post(
            "/api/v1/imports",
            {
                "raw_file_content": "date,name,amount\n2024-01-01,A,-1\n",
                "account_id": str(account.pk),
                "publish": True,
            },
            format="json",
        )
    assert resp.status_code == 202, resp.content
    data = alice.client.get(f"/api/v1/imports/{resp.json()['data']['id']}").json()["data"]
    assert data["status"] == "complete"
    assert Transaction.objects.get().amount == Decimal("1")


def test_publish_string_true_in_form(alice, django_capture_on_commit_callbacks):
    account = alice.account()
    with django_capture_on_commit_callbacks(execute=True):
        resp = upload(
            alice.client,
            b"date,name,amount\n2024-01-01,A,-1\n",
            account_id=str(account.pk),
            publish="true",
        )
    assert resp.status_code == 202, resp.content
    assert Transaction.objects.count() == 1


def test_wrong_state_conflicts_name_the_state(alice, django_capture_on_commit_callbacks):
    account = alice.account()
    data = upload(
        alice.client, b"date,name,amount\n2024-01-01,A,1\n", account_id=str(account.pk)
    ).json()["data"]
    body = assert_error(alice.client.post(f"/api/v1/imports/{data['id']}/revert"), 409, "conflict")
    assert "pending" in body["message"]
    publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    body = assert_error(alice.client.post(f"/api/v1/imports/{data['id']}/publish"), 409, "conflict")
    assert "complete" in body["message"]
    resp = alice.client.patch(
        f"/api/v1/imports/{data['id']}", {"date_format": "%d.%m.%Y"}, format="json"
    )
    assert "complete" in assert_error(resp, 409, "conflict")["message"]


def test_patch_configuration_reparses(alice):
    account = alice.account()
    content = b"Datum;Name;Wert\n31.01.2024;A;1,50\n"
    resp = upload(
        alice.client,
        content,
        account_id=str(account.pk),
        date_col_label="Datum",
        amount_col_label="Wert",
    )
    data = resp.json()["data"]
    assert data["stats"]["invalid_rows_count"] == 1
    resp = alice.client.patch(
        f"/api/v1/imports/{data['id']}",
        {
            "date_format": "%d.%m.%Y",
            "number_format": "1.234,56",
            "signage_convention": "inflows_negative",
        },
        format="json",
    )
    assert resp.status_code == 200, resp.content
    assert resp.json()["data"]["stats"]["invalid_rows_count"] == 0
    row = rows(alice.client, data["id"])[0]
    assert (row["date"], row["amount"]) == ("2024-01-31", "1.50")


def test_duplicate_headers_and_missing_columns_are_422(alice):
    resp = upload(alice.client, b"date,Date ,name,amount\n2024-01-01,x,A,1\n")
    assert "duplicate" in assert_error(resp, 422, "validation_failed")["message"]
    resp = upload(alice.client, b"when,name,amount\n2024-01-01,A,1\n")
    assert "date_col_label" in assert_error(resp, 422, "validation_failed")["message"]
    assert Import.objects.count() == 0


def test_foreign_account_is_422_and_foreign_import_404(alice, charlie):
    foreign = charlie.account()
    resp = upload(alice.client, b"date,name,amount\n2024-01-01,A,1\n", account_id=str(foreign.pk))
    assert "account_id" in assert_error(resp, 422, "validation_failed")["message"]
    data = upload(charlie.client, b"date,name,amount\n2024-01-01,A,1\n").json()["data"]
    assert_error(alice.client.get(f"/api/v1/imports/{data['id']}"), 404, "not_found")
    assert_error(alice.client.get(f"/api/v1/imports/{data['id']}/rows"), 404, "not_found")
    assert_error(alice.client.post(f"/api/v1/imports/{data['id']}/publish"), 404, "not_found")
    assert alice.client.get("/api/v1/imports").json()["meta"]["total_count"] == 0


def test_list_filters_and_meta(alice):
    upload(alice.client, b"date,name,amount\n2024-01-01,A,1\n")
    resp = alice.client.get("/api/v1/imports", {"status": "pending", "type": "TransactionImport"})
    body = resp.json()
    assert body["meta"] == {"page": 1, "per_page": 25, "total_count": 1, "total_pages": 1}
    assert alice.client.get("/api/v1/imports", {"status": "complete"}).json()["data"] == []
    assert_error(alice.client.get("/api/v1/imports", {"status": "nope"}), 422, "validation_failed")


def test_read_key_cannot_upload(alice):
    resp = upload(alice.read_client, b"date,name,amount\n2024-01-01,A,1\n")
    assert_error(resp, 403, "insufficient_scope")


def test_oversized_upload_is_413(alice, settings):
    settings.IMPORT_MAX_UPLOAD_BYTES = 50
    resp = upload(alice.client, b"date,name,amount\n" + b"2024-01-01,A,1\n" * 10)
    body = assert_error(resp, 413, "payload_too_large")
    assert body["details"]["limit_bytes"] == 50


def test_published_rows_are_matched_as_transfers_with_other_accounts_only(
    alice, django_capture_on_commit_callbacks
):
    checking, savings = alice.account(name="Checking"), alice.account(name="Savings")
    r = alice.client.post(
        "/api/v1/transactions",
        {
            "transaction": {
                "account_id": str(savings.pk),
                "date": "2024-03-03",
                "amount": "-500.00",
                "name": "From checking",
            }
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    # 500 leaves checking (the file's money-out sign); 20 out and 20 back in checking itself.
    csv = b"date,name,amount\n2024-03-01,To savings,-500\n2024-03-05,A,-20\n2024-03-06,B,20\n"
    data = upload(alice.client, csv, account_id=str(checking.pk)).json()["data"]
    publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    transfers = alice.client.get("/api/v1/transfers").json()["transfers"]
    assert len(transfers) == 1
    assert transfers[0]["status"] == "pending"
    assert transfers[0]["outflow_transaction"]["name"] == "To savings"
    assert transfers[0]["inflow_transaction"]["id"] == r.json()["id"]


def test_opposite_rows_of_one_account_are_never_a_transfer(
    alice, django_capture_on_commit_callbacks
):
    checking = alice.account(name="Checking")
    alice.account(name="Empty savings")
    csv = b"date,name,amount\n2024-03-05,A,-20\n2024-03-06,B,20\n"
    data = upload(alice.client, csv, account_id=str(checking.pk)).json()["data"]
    assert publish(alice.client, data["id"], django_capture_on_commit_callbacks)["status"] == (
        "complete"
    )
    assert alice.client.get("/api/v1/transfers").json()["transfers"] == []


@contextlib.contextmanager
def import_rows_rewritten(import_id: str | None = None):
    """Count the import rows the database rewrites inside the block (`[n]` after it): by the
    rows' xmin on PostgreSQL (every UPDATE of a row makes a new version, even one that changes
    nothing), by a temporary trigger on SQLite."""
    from django.db import connection

    from imports.models import ImportRow

    table = ImportRow._meta.db_table
    out = [0]
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute(
                f'SELECT id, xmin::text FROM "{table}" WHERE data_import_id = %s', [import_id]
            )
            before = dict(cur.fetchall())
            yield out
            cur.execute(
                f'SELECT id, xmin::text FROM "{table}" WHERE data_import_id = %s', [import_id]
            )
            out[0] = sum(1 for pk, xmin in cur.fetchall() if before.get(pk, xmin) != xmin)
            return
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS bench_row_updates (n INTEGER)")
        cur.execute("DELETE FROM bench_row_updates")
        cur.execute(
            f'CREATE TEMP TRIGGER bench_row_updated AFTER UPDATE ON "{table}" '
            "BEGIN INSERT INTO bench_row_updates VALUES (1); END"
        )
        try:
            yield out
        finally:
            cur.execute("DROP TRIGGER bench_row_updated")
        cur.execute("SELECT count(*) FROM bench_row_updates")
        out[0] = cur.fetchone()[0]


def test_reimport_borrows_rows_and_publish_writes_none(alice, django_capture_on_commit_callbacks):
    """A re-import of an all-duplicate file into a fixed account borrows the earlier import's
    rows: it writes no import row when the file is read, its counts say every row repeats a
    transaction, and its publish writes no ledger row and no import row. Its rows list
    from the earlier import's, each naming the transaction it repeats."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from imports.models import Import, ImportRow

    account = alice.account(currency="EUR")
    first = european_import(alice, account).json()["data"]
    assert publish(alice.client, first["id"], django_capture_on_commit_callbacks)["status"] == (
        "complete"
    )
    stored = set(Transaction.objects.filter(account=account).values_list("pk", flat=True))
    row_table = ImportRow._meta.db_table

    with CaptureQueriesContext(connection) as reading:
        again = european_import(alice, account).json()["data"]
    assert again["stats"]["duplicates_count"] == 5
    assert again["stats"]["rows_count"] == 5
    assert again["verification"]["expected_record_counts"]["transactions"] == 0
    assert Import.objects.get(pk=again["id"]).rows_from_id is not None
    assert not ImportRow.objects.filter(data_import_id=again["id"]).exists()
    assert not [q for q in reading.captured_queries if f'INSERT INTO "{row_table}"' in q["sql"]]

    with CaptureQueriesContext(connection) as publishing:
        second = publish(alice.client, again["id"], django_capture_on_commit_callbacks)
    assert second["status"] == "complete"
    assert second["verification"]["readback"]["status"] == "matched"
    assert second["stats"]["duplicates_count"] == 5
    written = [
        q["sql"]
        for q in publishing.captured_queries
        if q["sql"].lstrip().upper().startswith(("INSERT", "COPY", "UPDATE"))
        and (Transaction._meta.db_table in q["sql"] or row_table in q["sql"])
    ]
    assert not written
    assert set(Transaction.objects.filter(account=account).values_list("pk", flat=True)) == stored
    assert not ImportRow.objects.filter(data_import_id=again["id"]).exists()

    # Listing the rows writes nothing either: each names the transaction it repeats.
    listed = alice.client.get(f"/api/v1/imports/{again['id']}/rows").json()["data"]
    assert [row["duplicate"] for row in listed] == [True] * 5
    assert {row["duplicate_of"] for row in listed} == {str(pk) for pk in stored}
    assert not ImportRow.objects.filter(data_import_id=again["id"]).exists()


def test_reimport_with_an_account_column_is_marked_by_the_join(
    alice, django_capture_on_commit_callbacks
):
    """Rows whose account comes from a column are matched after the file is read: a
    re-import's rows are marked by the join with the ledger, and publish writes nothing."""
    alice.account(name="Checking")
    content = b"date;name;amount;account\n2024-01-01;A;1;Checking\n2024-01-02;B;2;Checking\n"
    first = upload(alice.client, content).json()["data"]
    done = publish(alice.client, first["id"], django_capture_on_commit_callbacks)
    assert done["verification"]["readback"]["status"] == "matched"
    stored = set(Transaction.objects.filter(family=alice.family).values_list("pk", flat=True))
    assert len(stored) == 2
    again = upload(alice.client, content).json()["data"]
    assert again["stats"]["duplicates_count"] == 2
    marked = rows(alice.client, again["id"])
    assert {r["duplicate_of"] for r in marked} == {str(pk) for pk in stored}
    with import_rows_rewritten(again["id"]) as rewritten:
        second = publish(alice.client, again["id"], django_capture_on_commit_callbacks)
    assert rewritten == [0]
    assert second["status"] == "complete"
    assert second["verification"]["readback"]["checked_counts"]["transactions"] == 0
    assert Transaction.objects.filter(family=alice.family).count() == 2
