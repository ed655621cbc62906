"""Building a rich household over HTTP, and comparing archives record by record."""

from __future__ import annotations

import io
import json
import re
import zipfile
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from exports.selectors import KINDS
from finance.models import Account
from providers.models import ProviderConnection
from tests.providers.factories import ProviderAccountFactory, ProviderConnectionFactory

PROVIDER_SECRET = "lf-secret-api-key-6f1e2d"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# What a restore changes on purpose (docs/decisions.md "Export and restore"): connections come
# back waiting for new credentials.
RESTORE_CHANGES = {"provider_connections": ("status", "error")}


def ok(response: Any, status: int = 201) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.content[:800])
    return response.json()


def post(household: Any, url: str, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
    return ok(household.client.post(url, body, format="json"), status)


def txn(household: Any, account: dict, date: str, amount: str, name: str, **fields: Any) -> dict:
    body = {"account_id": account["id"], "date": date, "amount": amount, "name": name, **fields}
    return post(household, "/api/v1/transactions", {"transaction": body})


def build_rich_household(household: Any, capture: Any) -> None:
    """Several currencies, a trading account with trades, a category hierarchy, tags, transfers
    confirmed and rejected, an import, a rule, exchange rates, security prices and a provider
    connection with its secret, all over HTTP but the connection (which needs a bank)."""
    account = lambda **f: post(household, "/api/v1/accounts", {"account": f})  # noqa: E731
    checking = account(
        name="Checking", currency="USD", balance="1000.00", balance_date="2024-01-01"
    )
    savings = account(name="Savings", currency="USD")
    euro = account(name="Girokonto", currency="EUR", institution_name="Sparkasse")
    yen = account(name="Yen wallet", currency="JPY")
    broker = account(name="Brokerage", currency="USD", account_type="investment")
    card = account(name="Card", currency="USD", account_type="credit_card")
    food = post(household, "/api/v1/categories", {"category": {"name": "Food"}})
    groceries = post(
        household,
        "/api/v1/categories",
        {"category": {"name": "Groceries", "parent_id": food["id"], "color": "#112233"}},
    )
    post(household, "/api/v1/categories", {"category": {"name": "Fun"}})
    trip = post(household, "/api/v1/tags", {"tag": {"name": "trip"}})
    work = post(household, "/api/v1/tags", {"tag": {"name": "work", "color": "#aa0000"}})
    shop = post(household, "/api/v1/merchants", {"merchant": {"name": "Corner shop"}})
    post(
        household,
        "/api/v1/rules",
        {
            "rule": {
                "name": "Coffee is food",
                "conditions": [{"field": "name", "operator": "contains", "value": "coffee"}],
                "actions": [
                    {"type": "set_category", "value": groceries["id"]},
                    {"type": "add_tags", "value": [work["id"]]},
                ],
            }
        },
    )
    txn(household, checking, "2024-02-01", "3.50", "Coffee beans")  # the rule sets it
    txn(
        household, checking, "2024-02-02", "42.10", "Market", category_id=groceries["id"],
        merchant_id=shop["id"], tag_ids=[trip["id"], work["id"]], notes="weekly\nshop",
    )  # fmt: skip
    txn(household, euro, "2024-02-03", "12.34", "Bäckerei", tag_ids=[trip["id"]])
    txn(household, yen, "2024-02-04", "1500", "Ramen")
    txn(
        household,
        checking,
        "2024-02-05",
        "-2500.00",
        "Salary",
        external_id="pay-1",
        source="payroll",
    )
    # a confirmed transfer, and a rejected one
    txn(household, checking, "2024-03-01", "500.00", "To savings")
    txn(household, savings, "2024-03-02", "-500.00", "From checking")
    txn(household, checking, "2024-03-10", "75.00", "Pay card")
    txn(household, card, "2024-03-11", "-75.00", "Card payment")
    transfers = ok(household.client.get("/api/v1/transfers"), 200)["transfers"]
    assert len(transfers) == 2, transfers
    by_amount = {t["amount"]: t for t in transfers}
    ok(household.client.post(f"/api/v1/transfers/{by_amount['500.00']['id']}/confirm"), 200)
    ok(household.client.post(f"/api/v1/transfers/{by_amount['75.00']['id']}/reject"), 200)

    # a trading account: a deposit, buys, a sell, a price
    def trade(**fields: Any) -> None:
        post(household, "/api/v1/trades", {"trade": {"account_id": broker["id"], **fields}})

    trade(date="2024-01-02", type="deposit", amount="5000")
    trade(date="2024-01-03", ticker="VTI", qty=10, price="200.5")
    trade(date="2024-01-04", ticker="AAPL", qty="2.5", price=180)
    trade(date="2024-02-04", ticker="VTI", qty=-3, price=210)
    vti = ok(household.client.get("/api/v1/securities", {"search": "VTI"}), 200)
    security_id = next(s["id"] for s in vti["securities"] if s["ticker"] == "VTI")
    post(
        household,
        "/api/v1/security_prices",
        {"security_price": {"security_id": security_id, "date": "2024-02-10", "price": "215.25"}},
    )
    post(
        household,
        "/api/v1/exchange_rates",
        {
            "exchange_rate": {
                "date": "2024-02-01",
                "from_currency": "EUR",
                "to_currency": "USD",
                "rate": "1.0812",
            }
        },
    )
    # an import, published
    content = b"Date,Name,Amount\n2024-04-01,Imported one,-10.00\n2024-04-02,Imported two,20.5\n"
    upload = SimpleUploadedFile("bank.csv", content, content_type="text/csv")
    with capture(execute=True):
        imported = household.client.post(
            "/api/v1/imports",
            {"file": upload, "account_id": checking["id"], "publish": "true"},
            format="multipart",
        )
    assert imported.status_code in (201, 202), imported.content
    # a provider connection (with a secret that must never leave)
    connection = ProviderConnectionFactory(family=household.family, name="My bank")
    connection.credential = PROVIDER_SECRET
    connection.save()
    ProviderAccountFactory(
        connection=connection,
        upstream_id="acc-1",
        name="Bank checking",
        account=Account.objects.get(pk=euro["id"]),
    )
    assert ProviderConnection.objects.filter(family=household.family).count() == 1


def read_archive(data: bytes) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]], bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        records = {
            kind: [json.loads(line) for line in archive.read(f"{kind}.jsonl").splitlines()]
            for kind in KINDS
        }
        csv_bytes = archive.read("transactions.csv")
    return manifest, records, csv_bytes


def _labels(records: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    """A name for every record id, from its content: references compare by what they name."""
    labels: dict[str, str] = {}
    for kind, lines in records.items():
        for line in lines:
            natural = line.get("name") or line.get("ticker") or line.get("date") or ""
            labels[line["id"]] = f"<{kind}:{natural}>"
            for account in line.get("accounts", []) if kind == "provider_connections" else []:
                labels[account["id"]] = f"<provider_account:{account['upstream_id']}>"
    return labels


def canonical(records: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """Each file's records with every id replaced by the label of what it names, sorted: two
    archives of the same household compare equal field for field, ids aside."""
    labels = _labels(records)

    def swap(value: Any) -> Any:
        if isinstance(value, str):
            return labels.get(value, "<unknown id>" if UUID.match(value) else value)
        if isinstance(value, list):
            return [swap(v) for v in value]
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        return value

    out = {}
    for kind, lines in records.items():
        dropped = RESTORE_CHANGES.get(kind, ())
        out[kind] = sorted(
            json.dumps(swap({k: v for k, v in line.items() if k not in dropped}), sort_keys=True)
            for line in lines
        )
    return out
