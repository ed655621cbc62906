"""One bank, seen through either provider's fake server: the sync-rule tests (issue 24) write
rows once and run them against Lunch Flow and SimpleFIN alike, over real HTTP, with the
household's side (connect, sync, edits, reads) through the API.

Rows are in the ledger's sign (positive = money out) and dated in days before today; each
fake server gets them in its own protocol's form (`publish`)."""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils import timezone

from providers.testing.lunchflow_server import FakeLunchFlow, Fault
from providers.testing.lunchflow_server import Scenario as LunchFlowScenario
from providers.testing.simplefin_server import FakeSimplefinServer
from providers.testing.simplefin_server import Scenario as SimplefinScenario

BASE = "/api/v1"
NETWORK_ATTEMPTS = 4  # the SimpleFIN client tries a dropped request this many times


def today() -> dt.date:
    return timezone.now().date()


def ago(days: int) -> dt.date:
    return today() - dt.timedelta(days=days)


@dataclass
class Row:
    """An upstream transaction. `uid` "" is a blank id (Lunch Flow pending rows)."""

    uid: str
    date: dt.date
    amount: Decimal
    name: str
    merchant: str | None = None
    pending: bool = False
    currency: str = "EUR"


class Bank:
    """The upstream accounts and rows of one household, served by one provider's fake."""

    provider = ""
    blank_ids = False  # whether the provider sends rows without an id

    def __init__(self, accounts: tuple[str, ...] = ("acc-1",)) -> None:
        self.accounts = list(accounts)
        self.rows: dict[str, list[Row]] = {a: [] for a in self.accounts}
        self.connection_id: str | None = None

    def add(
        self,
        uid: str,
        days_ago: int,
        amount: str | Decimal,
        name: str,
        *,
        pending: bool = False,
        merchant: str | None = None,
        account: str | None = None,
    ) -> Row:
        row = Row(uid, ago(days_ago), Decimal(amount), name, merchant, pending)
        self.rows[account or self.accounts[0]].append(row)
        return row

    def remove(self, row: Row) -> None:
        for rows in self.rows.values():
            if row in rows:
                rows.remove(row)

    def find(self, uid: str) -> Row:
        return next(r for rows in self.rows.values() for r in rows if r.uid == uid)

    # provider specifics ---------------------------------------------------------------------
    def publish(self) -> None:
        raise NotImplementedError

    def connect_body(self) -> dict[str, Any]:
        raise NotImplementedError

    faults: tuple[str, ...] = ("status",)  # the kinds of fault the fake server can play

    def fail_sync(self, kind: str = "status") -> None:
        """The next sync fails as a whole, leaving every account as it was."""
        raise NotImplementedError

    def fail_account(self, account: str, kind: str = "status") -> None:
        """The next sync fails for `account` alone (or as a whole, where one request serves
        every account: then `fails_whole` is True)."""
        raise NotImplementedError

    fails_whole = False

    def faults_clear(self) -> None:
        raise NotImplementedError

    def omit_pending(self, omit: bool) -> bool:
        """The institution leaves pending rows out; False when the provider cannot."""
        return False

    # the household's side, over the API ----------------------------------------------------
    def connect(self, household) -> str:
        self.publish()
        response = household.client.post(
            f"{BASE}/provider_connections", self.connect_body(), format="json"
        )
        assert response.status_code == 201, response.content
        self.connection_id = response.json()["id"]
        return self.connection_id

    def sync(self, household, capture) -> dict[str, Any]:
        self.publish()
        with capture(execute=True):
            response = household.client.post(
                f"{BASE}/provider_connections/{self.connection_id}/sync"
            )
        assert response.status_code == 202, response.content
        sync = household.client.get(f"{BASE}/syncs/{response.json()['id']}")
        assert sync.status_code == 200, sync.content
        return sync.json()


class LunchFlowBank(Bank):
    provider = "lunchflow"
    blank_ids = True

    def __init__(self, server: FakeLunchFlow, accounts: tuple[str, ...] = ("acc-1",)) -> None:
        super().__init__(accounts)
        self.server = server
        scenario: LunchFlowScenario = server.scenario
        for account in self.accounts:
            scenario.add_account(account, f"Account {account}", "EUR", "100.00")

    def publish(self) -> None:
        for account, rows in self.rows.items():
            self.server.scenario.transactions[account] = [
                {
                    "id": row.uid,
                    "accountId": account,
                    "amount": float(-row.amount),
                    "currency": row.currency,
                    "date": row.date.isoformat(),
                    "merchant": row.merchant,
                    "description": row.name,
                    "isPending": row.pending,
                }
                for row in rows
            ]

    def connect_body(self) -> dict[str, Any]:
        return {"provider": "lunchflow", "api_key": "test-key"}

    faults = ("status", "drop", "cut", "malformed", "shape")

    def fail_sync(self, kind: str = "status") -> None:
        self.server.scenario.faults["/accounts"] = Fault(kind=kind, status=500, times=None)

    def fail_account(self, account: str, kind: str = "status") -> None:
        what = "balance" if kind == "status" and len(self.server.scenario.requests) % 2 else ""
        path = f"/accounts/{account}/{what or 'transactions'}"
        self.server.scenario.faults[path] = Fault(kind=kind, status=502, times=None)

    def faults_clear(self) -> None:
        self.server.scenario.faults.clear()


def _noon(day: dt.date) -> int:
    return int(dt.datetime.combine(day, dt.time(12), tzinfo=dt.UTC).timestamp())


class SimplefinBank(Bank):
    provider = "simplefin"
    fails_whole = True  # one GET /accounts serves every account

    def __init__(self, server: FakeSimplefinServer, accounts: tuple[str, ...] = ("acc-1",)) -> None:
        super().__init__(accounts)
        self.server = server
        org = {"domain": "bank.example", "name": "Bank", "sfin-url": "https://bank.example/"}
        self.scenario = SimplefinScenario(
            accounts=[
                {
                    "org": org,
                    "id": account,
                    "name": f"Account {account}",
                    "currency": "EUR",
                    "balance": "100.00",
                    "balance-date": int(time.time()),
                    "transactions": [],
                }
                for account in self.accounts
            ]
        )

    def publish(self) -> None:
        for item in self.scenario.accounts:
            item["transactions"] = [
                {
                    "id": row.uid,
                    "posted": 0 if row.pending else _noon(row.date),
                    "transacted_at": _noon(row.date),
                    "amount": str(-row.amount),
                    "description": row.name,
                    **({"payee": row.merchant} if row.merchant else {}),
                    "pending": row.pending,
                }
                for row in self.rows[item["id"]]
            ]

    def connect_body(self) -> dict[str, Any]:
        return {
            "provider": "simplefin",
            "setup_token": self.server.create_setup_token(self.scenario),
        }

    faults = ("status", "drop", "cut", "malformed", "shape")

    def fail_sync(self, kind: str = "status") -> None:
        if kind == "status":
            self.server.fail_with(500, paths=("accounts",))
        elif kind == "drop":
            self.server.drop_connections(NETWORK_ATTEMPTS, paths=("accounts",))
        else:  # a cut body is retried like a dropped connection
            body = {"unexpected": [1, 2]} if kind == "shape" else None
            self.server.fault(kind, NETWORK_ATTEMPTS, body=body, paths=("accounts",))

    def fail_account(self, account: str, kind: str = "status") -> None:
        self.fail_sync(kind)

    def faults_clear(self) -> None:
        self.server.clear_failures()

    def omit_pending(self, omit: bool) -> bool:
        self.scenario.omit_pending = omit
        return True


def ledger(household, connection_id: str | None = None) -> list[dict[str, Any]]:
    """Every transaction of the household, read over the API."""
    out: list[dict[str, Any]] = []
    page = 1
    while True:
        response = household.client.get(f"{BASE}/transactions", {"page": page, "per_page": 100})
        assert response.status_code == 200, response.content
        body = response.json()
        out.extend(body["transactions"])
        if page >= body["pagination"]["total_pages"]:
            return out
        page += 1


def patch(household, txn_id: str, **fields: Any) -> dict[str, Any]:
    response = household.client.patch(
        f"{BASE}/transactions/{txn_id}", {"transaction": fields}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


@contextlib.contextmanager
def bank_for(provider: str, settings, accounts: tuple[str, ...] = ("acc-1",)) -> Iterator[Bank]:
    """A bank behind a started fake server of `provider`, with the sync settings these tests
    assume: pending rows asked for, 45 days of history, 30 of overlap, stale after 14."""
    settings.PROVIDER_HTTP_TIMEOUT = 2.0
    settings.PROVIDER_MAX_RETRY_AFTER = 2.0
    settings.SIMPLEFIN_RETRY_BASE_DELAY = 0.001
    settings.LUNCHFLOW_INCLUDE_PENDING = settings.SIMPLEFIN_INCLUDE_PENDING = True
    settings.LUNCHFLOW_HISTORY_DAYS = settings.SIMPLEFIN_HISTORY_DAYS = 45
    settings.SYNC_OVERLAP_DAYS = 30
    settings.SYNC_STALE_PENDING_DAYS = 14
    settings.SIMPLEFIN_DAILY_REQUEST_LIMIT = 500
    if provider == "lunchflow":
        lunchflow = FakeLunchFlow(LunchFlowScenario()).start()
        settings.LUNCHFLOW_BASE_URL = lunchflow.base_url
        try:
            yield LunchFlowBank(lunchflow, accounts)
        finally:
            lunchflow.stop()
    else:
        simplefin = FakeSimplefinServer().start()
        try:
            yield SimplefinBank(simplefin, accounts)
        finally:
            simplefin.stop()
