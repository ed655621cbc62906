"""Shared steps of the statement-file tests: upload a fixture over HTTP, read rows, publish,
revert, and snapshots of what the ledger holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from finance.models import Account, AccountBalance, Transaction

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def upload(client, content: bytes, name: str, import_type: str, **fields: Any):
    data = {
        "file": SimpleUploadedFile(name, content, content_type="application/octet-stream"),
        "type": import_type,
        **fields,
    }
    return client.post("/api/v1/imports", data, format="multipart")


def uploaded(client, content: bytes, name: str, import_type: str, **fields: Any) -> dict:
    resp = upload(client, content, name, import_type, **fields)
    assert resp.status_code == 201, resp.content
    return resp.json()["data"]


def rows(client, import_id: str, **params: Any) -> list[dict]:
    out, page = [], 1
    while True:
        resp = client.get(
            f"/api/v1/imports/{import_id}/rows", {"per_page": 100, "page": page, **params}
        )
        assert resp.status_code == 200, resp.content
        body = resp.json()
        out += body["data"]
        if page >= body["meta"]["total_pages"]:
            return out
        page += 1


def mappings(client, import_id: str) -> dict[tuple[str, str], dict]:
    resp = client.get(f"/api/v1/imports/{import_id}/mappings", {"per_page": 100})
    assert resp.status_code == 200, resp.content
    return {(m["kind"], m["value"]): m for m in resp.json()["data"]}


def map_accounts(client, import_id: str, targets: dict[str, Account]) -> None:
    resp = client.patch(
        f"/api/v1/imports/{import_id}/mappings",
        {
            "mappings": [
                {"kind": "account", "value": value, "target_id": str(account.pk)}
                for value, account in targets.items()
            ]
        },
        format="json",
    )
    assert resp.status_code == 200, resp.content


def publish(client, import_id: str, callbacks) -> dict:
    with callbacks(execute=True):
        resp = client.post(f"/api/v1/imports/{import_id}/publish")
    assert resp.status_code == 202, resp.content
    return client.get(f"/api/v1/imports/{import_id}").json()["data"]


def revert(client, import_id: str, callbacks) -> dict:
    with callbacks(execute=True):
        resp = client.post(f"/api/v1/imports/{import_id}/revert")
    assert resp.status_code == 202, resp.content
    return client.get(f"/api/v1/imports/{import_id}").json()["data"]


def ledger(account: Account) -> list[tuple]:
    return sorted(
        Transaction.objects.filter(account=account).values_list(
            "id", "date", "amount", "currency", "name", "notes", "source", "external_id"
        )
    )


def account_state(account: Account) -> tuple:
    """Everything an import may change on an account: its rows, balances, reported balance."""
    account.refresh_from_db()
    series = list(AccountBalance.objects.filter(account=account).values_list("date", "balance"))
    return (
        ledger(account),
        series,
        account.balance,
        account.reported_balance,
        account.reported_balance_at,
    )


def readback(data: dict) -> dict:
    return data["verification"]["readback"]


def published_rows(account: Account) -> list[tuple]:
    """(date, amount, name, source, external_id) of an account's transactions, by date."""
    return [
        (t.date.isoformat(), f"{t.amount:.2f}", t.name, t.source, t.external_id)
        for t in Transaction.objects.filter(account=account).order_by("date", "amount", "name")
    ]
