"""A fake European Central Bank serving the euro reference-rate files in the ECB's own XML
format (`eurofxref-daily.xml`, `eurofxref-hist-90d.xml`, `eurofxref-hist.xml`), for tests
and for trying exchange rates by hand:

    python -m providers.testing.ecb_server --port 8767        # or: make fake-ecb
    FX_BASE_URL=http://127.0.0.1:8767/stats/eurofxref \\
      .venv/bin/python manage.py fetch_exchange_rates --history

It serves a mutable Scenario: rates per day (1 EUR = rate units of a currency), and faults per
file (any HTTP status, a body that is not XML, a body with a DTD, a slow answer)."""

from __future__ import annotations

import argparse
import datetime as dt
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import quoteattr

PREFIX = "/stats/eurofxref"
DAILY, NINETY_DAYS, HISTORY = "eurofxref-daily.xml", "eurofxref-hist-90d.xml", "eurofxref-hist.xml"

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" '
    'xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">\n'
    "\t<gesmes:subject>Reference rates</gesmes:subject>\n"
    "\t<gesmes:Sender>\n\t\t<gesmes:name>European Central Bank</gesmes:name>\n"
    "\t</gesmes:Sender>\n\t<Cube>\n"
)
TAIL = "\t</Cube>\n</gesmes:Envelope>\n"


@dataclass
class Fault:
    """kind: status | not_xml | dtd | slow (then the normal answer)."""

    kind: str = "status"
    status: int = 500
    times: int | None = None  # None: every request; else this many, then normal answers
    delay: float = 0.0


@dataclass
class Scenario:
    days: dict[dt.date, dict[str, Any]] = field(default_factory=dict)
    faults: dict[str, Fault] = field(default_factory=dict)  # file name -> fault
    requests: list[str] = field(default_factory=list)

    def add_day(self, day: dt.date | str, **rates: Any) -> None:
        """`add_day("2024-05-17", USD="1.0866", GBP="0.8550")`."""
        if isinstance(day, str):
            day = dt.date.fromisoformat(day)
        self.days.setdefault(day, {}).update(rates)

    def document(self, file: str) -> bytes:
        if not self.days:
            shown: list[dt.date] = []
        elif file == DAILY:
            shown = [max(self.days)]
        elif file == NINETY_DAYS:
            newest = max(self.days)
            shown = [d for d in self.days if (newest - d).days < 90]
        else:
            shown = list(self.days)
        parts = [HEAD]
        for day in sorted(shown, reverse=True):  # the ECB lists the newest day first
            parts.append(f"\t\t<Cube time='{day.isoformat()}'>\n")
            for currency, rate in self.days[day].items():
                parts.append(
                    f"\t\t\t<Cube currency={quoteattr(currency)} rate={quoteattr(str(rate))}/>\n"
                )
            parts.append("\t\t</Cube>\n")
        parts.append(TAIL)
        return "".join(parts).encode()


class _Handler(BaseHTTPRequestHandler):
    server: FakeEcb
    protocol_version = "HTTP/1.1"
    # Small responses go out at once: with Nagle's algorithm on, each one waited for the
    # client's delayed ACK (about 40 ms per request on loopback).
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:
        return None

    def _send(self, status: int, body: bytes, content_type: str = "text/xml") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        file = path[len(PREFIX) + 1 :] if path.startswith(PREFIX + "/") else ""
        scenario = self.server.scenario
        with self.server.lock:
            scenario.requests.append(file or path)
            fault = scenario.faults.get(file)
            if fault is not None and fault.times is not None:
                if fault.times <= 0:
                    fault = None
                else:
                    fault.times -= 1
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.kind == "status":
                self._send(fault.status, b"<html><body>Service unavailable</body></html>")
                return
            if fault.kind == "not_xml":
                self._send(200, b"<html><body>Maintenance <b>tonight</body>", "text/html")
                return
            if fault.kind == "dtd":
                body = (
                    b'<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY lol "lol">]>'
                    b"<gesmes:Envelope xmlns:gesmes='http://www.gesmes.org/xml/2002-08-01'>"
                    b"&lol;</gesmes:Envelope>"
                )
                self._send(200, body)
                return
        if file not in (DAILY, NINETY_DAYS, HISTORY):
            self._send(404, b"<html><body>Not found</body></html>", "text/html")
            return
        with self.server.lock:
            body = scenario.document(file)
        self._send(200, body)


class FakeEcb(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, scenario: Scenario | None = None, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.scenario = scenario or Scenario()
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{PREFIX}"

    def start(self) -> FakeEcb:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


# Rates near the ECB's own of late 2024, moved a little each working day.
DEMO_BASE = {
    "USD": "1.0850",
    "GBP": "0.8400",
    "JPY": "162.50",
    "CHF": "0.9400",
    "CAD": "1.4800",
    "AUD": "1.6300",
    "SEK": "11.4500",
    "PLN": "4.3000",
}


def demo_scenario(days: int = 400, today: dt.date | None = None) -> Scenario:
    """Working days (Monday to Friday) of the last `days` days, deterministic rates."""
    today = today or dt.date.today()
    scenario = Scenario()
    for n in range(days):
        day = today - dt.timedelta(days=n)
        if day.weekday() >= 5:
            continue
        wobble = Decimal((n * 7) % 41 - 20) / Decimal(2000)  # -1% .. +1%
        scenario.add_day(
            day,
            **{
                cur: (Decimal(base) * (1 + wobble)).quantize(Decimal(base))
                for cur, base in DEMO_BASE.items()
            },
        )
    return scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8767)
    parser.add_argument("--days", type=int, default=400, help="days of history to serve")
    args = parser.parse_args()
    server = FakeEcb(demo_scenario(args.days), port=args.port)
    print(f"Fake ECB on {server.base_url} ({', '.join(DEMO_BASE)} against EUR). Ctrl-C stops it.")
    print(
        f"  FX_BASE_URL={server.base_url} .venv/bin/python manage.py fetch_exchange_rates --history"
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
