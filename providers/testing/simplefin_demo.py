"""The fake SimpleFIN server's demo scenario, and the server by hand.

`python -m providers.testing.simplefin_demo --port 8766` (`make fake-simplefin`) prints a setup
token for the demo scenario; `POST /demo/setup-token` prints another (to reconnect),
`POST /demo/revoke`, `/demo/drop/N`, `/demo/fail/402`, `/demo/omit-pending` script failures."""

from __future__ import annotations

import argparse
import time
from typing import Any

from providers.testing.simplefin_server import PREFIX, FakeSimplefinServer, Scenario


def demo_scenario(now: float | None = None) -> Scenario:
    """Two same-named checking accounts at one bank, a savings account, a pending row."""
    now = now or time.time()
    day = 86400
    org = {"domain": "demo.example", "name": "Demo Bank", "sfin-url": "https://demo.example/"}

    def tx(tid: str, days_ago: int, amount: str, description: str, **extra: Any) -> dict:
        posted = int(now - days_ago * day)
        return {
            "id": tid,
            "posted": posted,
            "amount": amount,
            "description": description,
            "transacted_at": posted - 3600,
            **extra,
        }

    return Scenario(
        accounts=[
            {
                "org": org,
                "id": "ACT-1",
                "name": "Checking",
                "currency": "USD",
                "balance": "1250.40",
                "available-balance": "1200.40",
                "balance-date": int(now),
                "transactions": [
                    tx(
                        "TRN-1",
                        3,
                        "-42.50",
                        "GROCERY STORE",
                        payee="Grocery Store",
                        memo="weekly shop",
                    ),
                    tx("TRN-2", 10, "2500.00", "PAYROLL", payee="Employer Inc"),
                    {
                        "id": "TRN-P1",
                        "posted": 0,
                        "amount": "-9.99",
                        "description": "STREAMING",
                        "payee": "Streamer",
                        "pending": True,
                        "transacted_at": int(now - day),
                    },
                ],
            },
            {
                "org": org,
                "id": "ACT-2",
                "name": "Checking",
                "currency": "USD",
                "balance": "310.00",
                "balance-date": int(now),
                "transactions": [tx("TRN-3", 5, "-15.00", "COFFEE", payee="Cafe")],
            },
            {
                "org": org,
                "id": "ACT-3",
                "name": "Savings",
                "currency": "USD",
                "balance": "10000.00",
                "balance-date": int(now),
                "transactions": [tx("TRN-4", 30, "12.34", "INTEREST")],
            },
        ],
        errors=[],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Run a fake SimpleFIN server on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    server = FakeSimplefinServer(port=args.port)
    server.demo = demo_scenario()
    base = server.base_url
    print(f"Fake SimpleFIN server on {base}{PREFIX}")
    print("Run the service with PROVIDER_ALLOW_PRIVATE_URLS=true: this server is on 127.0.0.1.")
    print("Setup token (claimable once):")
    print(server.create_setup_token(server.demo))
    print(
        "Controls: curl -X POST "
        f"{base}/demo/setup-token | /demo/revoke | /demo/drop/N | /demo/fail/402 | "
        "/demo/omit-pending",
        flush=True,
    )
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()


if __name__ == "__main__":
    main()
