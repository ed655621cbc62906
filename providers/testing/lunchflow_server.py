"""A fake Lunch Flow server speaking the published API (shared/spec/providers.md), for tests
and for trying a whole sync by hand:

    python -m providers.testing.lunchflow_server --port 8765      # or: make fake-lunchflow
    LUNCHFLOW_BASE_URL=http://127.0.0.1:8765/api/v1 make run       # then connect with
    # {"provider": "lunchflow", "api_key": "demo-key"}

It serves a mutable Scenario: accounts, balances, transactions (pending rows, blank ids),
holdings (or 501), a page size smaller than `total`, and faults per path (any HTTP status,
429 with Retry-After, a dropped connection, a body cut mid-way, malformed JSON, the wrong
shape, a slow answer), each for a number of requests or forever."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PREFIX = "/api/v1"


@dataclass
class Fault:
    """kind: status | drop | cut | malformed | shape | slow."""

    kind: str = "status"
    status: int = 500
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    times: int | None = None  # None: every request; else this many, then normal answers
    delay: float = 0.0


@dataclass
class Scenario:
    api_keys: set[str] = field(default_factory=lambda: {"test-key"})
    accounts: list[dict[str, Any]] = field(default_factory=list)
    balances: dict[str, dict[str, Any]] = field(default_factory=dict)
    transactions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    holdings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # absent: 501
    page_size: int | None = None  # rows per response; `total` still counts them all
    paging: str | None = None  # None: no paging parameter understood; "offset" or "page"
    faults: dict[str, Fault] = field(default_factory=dict)  # path (no prefix) -> fault
    requests: list[dict[str, Any]] = field(default_factory=list)

    def add_account(
        self,
        account_id: str,
        name: str,
        currency: str = "EUR",
        balance: Any = "0.00",
        institution: str = "Demo Bank",
    ) -> None:
        self.accounts.append(
            {
                "id": account_id,
                "name": name,
                "institution_name": institution,
                "institution_logo": None,
                "provider": "gocardless",
                "currency": currency,
                "status": "ACTIVE",
            }
        )
        self.balances[account_id] = {"amount": balance, "currency": currency}
        self.transactions.setdefault(account_id, [])

    def add_transaction(
        self,
        account_id: str,
        txn_id: str,
        date: str,
        amount: Any,
        description: str = "",
        merchant: str | None = None,
        pending: bool = False,
        currency: str | None = None,
    ) -> dict[str, Any]:
        row = {
            "id": txn_id,
            "accountId": account_id,
            "amount": amount,
            "currency": currency or self._currency(account_id),
            "date": date,
            "merchant": merchant,
            "description": description,
            "isPending": pending,
        }
        self.transactions.setdefault(account_id, []).append(row)
        return row

    def _currency(self, account_id: str) -> str:
        return next((a["currency"] for a in self.accounts if a["id"] == account_id), "EUR")

    def paths(self, method: str = "GET") -> list[str]:
        return [r["path"] for r in self.requests if r["method"] == method]


class _Handler(BaseHTTPRequestHandler):
    server: FakeLunchFlow
    protocol_version = "HTTP/1.1"
    # Small responses go out at once: with Nagle's algorithm on, each one waited for the
    # client's delayed ACK (about 40 ms per request on loopback).
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:
        return None

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        path = parts.path[len(PREFIX) :] if parts.path.startswith(PREFIX) else parts.path
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        scenario = self.server.scenario
        with self.server.lock:
            scenario.requests.append(
                {"method": "GET", "path": path, "query": query, "headers": dict(self.headers)}
            )
            fault = scenario.faults.get(path)
            if fault is not None and fault.times is not None:
                if fault.times <= 0:
                    fault = None
                else:
                    fault.times -= 1
        if fault is not None and self._fault(fault):
            return
        key = self.headers.get("x-api-key") or ""
        auth = self.headers.get("Authorization") or ""
        if auth.startswith("Bearer "):
            key = key or auth[7:]
        if key not in scenario.api_keys:
            self._send(401, {"error": "Unauthorized", "message": "Invalid API key"})
            return
        with self.server.lock:
            status, body = self._route(path, query)
        self._send(status, body)

    def _fault(self, fault: Fault) -> bool:
        if fault.delay:
            time.sleep(fault.delay)
        if fault.kind == "slow":
            return False
        if fault.kind == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return True
        if fault.kind == "cut":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "5000")
            self.end_headers()
            self.wfile.write(b'{"transactions": [{"id": "x", ')
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return True
        if fault.kind == "malformed":
            self._send(200, b'{"accounts": [ this is not json')
            return True
        if fault.kind == "shape":
            self._send(200, fault.body if fault.body is not None else {"unexpected": [1, 2]})
            return True
        body = fault.body if fault.body is not None else {"error": "Error", "message": "fault"}
        self._send(fault.status, body, fault.headers)
        return True

    def _route(self, path: str, query: dict[str, str]) -> tuple[int, Any]:
        scenario = self.server.scenario
        segments = [s for s in path.split("/") if s]
        if segments == ["accounts"]:
            return 200, {"accounts": scenario.accounts, "total": len(scenario.accounts)}
        if len(segments) != 3 or segments[0] != "accounts":
            return 404, {"error": "Not Found", "message": f"No route {path}"}
        account_id, what = segments[1], segments[2]
        if account_id not in {a["id"] for a in scenario.accounts}:
            return 404, {"error": "Not Found", "message": "Account not found"}
        if what == "balance":
            return 200, {"balance": scenario.balances[account_id]}
        if what == "holdings":
            if account_id not in scenario.holdings:
                return 501, {"error": "Not Implemented", "message": "Holdings not supported"}
            rows = scenario.holdings[account_id]
            total = sum(float(h.get("value") or 0) for h in rows)
            return 200, {"holdings": rows, "totalValue": total, "currency": "USD"}
        if what == "transactions":
            return 200, self._transactions(account_id, query)
        return 404, {"error": "Not Found", "message": f"No route {path}"}

    def _transactions(self, account_id: str, query: dict[str, str]) -> dict[str, Any]:
        scenario = self.server.scenario
        start = dt.date.fromisoformat(query["from"]) if "from" in query else dt.date.min
        end = dt.date.fromisoformat(query["to"]) if "to" in query else dt.date.max
        pending = query.get("include_pending") == "true"
        rows = [
            r
            for r in scenario.transactions.get(account_id, [])
            if start <= dt.date.fromisoformat(r["date"][:10]) <= end
            and (pending or not r.get("isPending"))
        ]
        rows.sort(key=lambda r: r["date"], reverse=True)
        first = 0
        if scenario.page_size and scenario.paging == "offset":
            first = int(query.get("offset", 0))
        elif scenario.page_size and scenario.paging == "page":
            first = (int(query.get("page", 1)) - 1) * scenario.page_size
        shown = (
            rows[first:] if scenario.page_size is None else rows[first : first + scenario.page_size]
        )
        return {"transactions": shown, "total": len(rows)}


class FakeLunchFlow(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, scenario: Scenario | None = None, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.scenario = scenario or Scenario()
        self.lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # a client that hung up (timeouts, faults): nothing to report

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{PREFIX}"

    def start(self) -> FakeLunchFlow:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def demo_scenario() -> Scenario:
    today = dt.date.today()

    def day(n: int) -> str:
        return (today - dt.timedelta(days=n)).isoformat()

    scenario = Scenario(api_keys={"demo-key"})
    scenario.add_account("acc-checking", "Everyday Checking", "EUR", 2450.75)
    scenario.add_account("acc-savings", "Savings", "EUR", 10000)
    scenario.add_account("acc-broker", "Brokerage", "USD", 5300, institution="Demo Broker")
    scenario.add_transaction("acc-checking", "t-1", day(10), 3200, "Salary", "ACME Corp")
    scenario.add_transaction("acc-checking", "t-2", day(8), -54.20, "Groceries", "Fresh Market")
    scenario.add_transaction("acc-checking", "t-3", day(5), -500, "Transfer to savings")
    scenario.add_transaction("acc-savings", "s-1", day(5), 500, "Transfer from checking")
    scenario.add_transaction("acc-checking", "", day(1), -3.50, "Coffee", "Cafe", pending=True)
    scenario.add_transaction("acc-checking", "", day(1), -3.50, "Coffee", "Cafe", pending=True)
    scenario.holdings["acc-broker"] = [
        {
            "security": {"name": "Apple Inc.", "currency": "USD", "tickerSymbol": "AAPL"},
            "quantity": 10,
            "price": 230,
            "value": 2300,
            "costBasis": 1500,
            "currency": "USD",
        }
    ]
    return scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = FakeLunchFlow(demo_scenario(), port=args.port)
    print(f"Fake Lunch Flow on {server.base_url} (api key: demo-key). Ctrl-C stops it.")
    print(f"  LUNCHFLOW_BASE_URL={server.base_url} LUNCHFLOW_INCLUDE_PENDING=true make run")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
