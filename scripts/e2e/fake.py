"""The fake Lunch Flow server as its own process for scripts/e2e/run.py, with two extra GETs
the e2e drives it by (any API key):

- `/__e2e/slow?delay=S`: every account's transactions answer S seconds late (0: at once);
- `/__e2e/stats`: requests served, and per API key the most requests ever in flight at once
  (a connection's sync asks one thing at a time: 2 means two runners of one connection).

    python scripts/e2e/fake.py --port 8765 --key e2e-key"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from providers.testing.lunchflow_server import (
    PREFIX,
    FakeLunchFlow,
    Fault,
    Scenario,
    _Handler,
)

ACCOUNTS = (("e2e-checking", "Checking", "2450.75"), ("e2e-savings", "Savings", "10000"))
ROWS_PER_ACCOUNT = 40


def scenario(key: str) -> Scenario:
    today = dt.date.today()
    out = Scenario(api_keys={key})
    for account_id, name, balance in ACCOUNTS:
        out.add_account(account_id, name, "EUR", balance)
        for n in range(ROWS_PER_ACCOUNT):
            day = (today - dt.timedelta(days=1 + n % 25)).isoformat()
            out.add_transaction(account_id, f"{account_id}-{n}", day, -1 - n, f"{name} row {n}")
    return out


class Handler(_Handler):
    server: E2EFake

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path.startswith("/__e2e/"):
            self._control(parts.path, {k: v[-1] for k, v in parse_qs(parts.query).items()})
            return
        key = self.headers.get("x-api-key") or self.headers.get("Authorization", "")[7:]
        server = self.server
        with server.lock:
            server.inflight[key] = server.inflight.get(key, 0) + 1
            server.max_inflight[key] = max(server.max_inflight.get(key, 0), server.inflight[key])
        try:
            super().do_GET()
        finally:
            with server.lock:
                server.inflight[key] -= 1

    def _control(self, path: str, query: dict[str, str]) -> None:
        server = self.server
        with server.lock:
            if path == "/__e2e/slow":
                delay = float(query.get("delay", "0"))
                for account_id, _, _ in ACCOUNTS:
                    route = f"/accounts/{account_id}/transactions"
                    if delay:
                        server.scenario.faults[route] = Fault(kind="slow", delay=delay)
                    else:
                        server.scenario.faults.pop(route, None)
            body = {
                "requests": len(server.scenario.requests),
                "transactions_requests": sum(
                    r["path"].endswith("/transactions") for r in server.scenario.requests
                ),
                "max_inflight": server.max_inflight,
                "inflight": server.inflight,
            }
        self._send(200, body)


class E2EFake(FakeLunchFlow):
    def __init__(self, scenario: Scenario, port: int) -> None:
        super().__init__(scenario, port)
        self.RequestHandlerClass = Handler
        self.inflight: dict[str, int] = {}
        self.max_inflight: dict[str, int] = {}
        self.lock = threading.Lock()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--key", default="e2e-key")
    args = parser.parse_args()
    server = E2EFake(scenario(args.key), args.port)
    print(json.dumps({"base_url": server.base_url}), flush=True)
    assert server.base_url.endswith(PREFIX)
    server.serve_forever()


if __name__ == "__main__":
    main()
