"""A fake SimpleFIN server: a real threaded HTTP server on 127.0.0.1 speaking the protocol.

    server = FakeSimplefinServer().start()
    token = server.create_setup_token(scenario)          # base64 of a one-shot claim URL
    ...                                                  # the app claims and syncs over HTTP
    server.drop_connections(2)                           # the next 2 requests are cut mid-way
    server.revoke(access_url)                            # later requests with it answer 403
    server.requests                                      # what the app sent (query, auth ok)
    server.stop()

A demo scenario and the command line are in `simplefin_demo.py` (`make fake-simplefin`)."""

from __future__ import annotations

import base64
import copy
import json
import secrets
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PREFIX = "/simplefin"


@dataclass
class Scenario:
    """What one SimpleFIN user sees: accounts with transactions (SimpleFIN sign: + = deposit)."""

    accounts: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    errlist: list[dict[str, Any]] = field(default_factory=list)
    connections: list[dict[str, Any]] = field(default_factory=list)
    omit_pending: bool = False  # the institution leaves pending rows out even when asked
    currencies: dict[str, dict[str, str]] = field(default_factory=dict)  # path -> {name, abbr}


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    authorized: bool
    authorization_header: bool
    raw_query: str


@dataclass
class _Credential:
    username: str
    password: str
    scenario: Scenario
    revoked: bool = False


@dataclass
class _Failure:
    kind: str  # "drop", "status", "cut", "slow", "malformed" or "shape"
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    paths: tuple[str, ...] = ()  # empty = any path
    body: Any = None  # "shape": the JSON sent with 200
    delay: float = 0.0  # seconds to wait before answering (any kind)


class FakeSimplefinServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._lock = threading.Lock()
        self._claims: dict[str, tuple[Scenario, bool]] = {}  # claim id -> (scenario, claimed)
        self._credentials: dict[str, _Credential] = {}  # username -> credential
        self._failures: list[_Failure] = []
        self.requests: list[RecordedRequest] = []
        self.info_versions = ["1.0", "2.0"]
        self.demo: Scenario | None = None  # set by main(): enables the /demo/ controls
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        # a client that hung up (timeouts, faults) is no error worth a traceback
        self._httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeSimplefinServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeSimplefinServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- scripting ---------------------------------------------------------------------------
    def create_setup_token(self, scenario: Scenario | None = None) -> str:
        """A base64 setup token whose claim URL works once and yields access to `scenario`."""
        claim_id = secrets.token_urlsafe(16)
        with self._lock:
            self._claims[claim_id] = (scenario if scenario is not None else Scenario(), False)
        return base64.b64encode(f"{self.base_url}{PREFIX}/claim/{claim_id}".encode()).decode()

    def access_url_for(self, scenario: Scenario) -> str:
        """An access URL issued without a claim (for client tests)."""
        return self._issue(scenario)

    def _issue(self, scenario: Scenario) -> str:
        username = "u" + secrets.token_hex(8)
        password = "p" + secrets.token_hex(16)
        with self._lock:
            self._credentials[username] = _Credential(username, password, scenario)
        host = self.base_url.removeprefix("http://")
        return f"http://{username}:{password}@{host}{PREFIX}"

    def revoke(self, access_url: str | None = None) -> None:
        """Revoke one access URL, or every access URL issued so far."""
        with self._lock:
            for cred in self._credentials.values():
                if access_url is None or f"//{cred.username}:" in access_url:
                    cred.revoked = True

    def drop_connections(self, times: int, *, paths: tuple[str, ...] = ()) -> None:
        """The next `times` requests (on `paths`, e.g. ("accounts",)) read the request and then
        close the socket with a reset, no response sent."""
        with self._lock:
            self._failures.extend(_Failure("drop", paths=paths) for _ in range(times))

    def fail_with(
        self,
        status: int,
        times: int = 1,
        *,
        headers: dict[str, str] | None = None,
        paths: tuple[str, ...] = (),
    ) -> None:
        """The next `times` requests (on `paths`) answer `status` (402, 403, 429, 500...)."""
        with self._lock:
            self._failures.extend(
                _Failure("status", status, headers or {}, paths) for _ in range(times)
            )

    def fault(
        self,
        kind: str,
        times: int = 1,
        *,
        body: Any = None,
        delay: float = 0.0,
        paths: tuple[str, ...] = (),
    ) -> None:
        """The next `times` requests (on `paths`) misbehave: `cut` (200, the body stops
        mid-way and the socket closes), `slow` (the normal answer after `delay` seconds),
        `malformed` (200 with broken JSON), `shape` (200 with `body`, valid JSON)."""
        with self._lock:
            self._failures.extend(
                _Failure(kind, paths=paths, body=body, delay=delay) for _ in range(times)
            )

    def clear_failures(self) -> None:
        with self._lock:
            self._failures.clear()

    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == f"{PREFIX}/{path}"]

    # --- request handling (called by the handler thread) -------------------------------------
    def _next_failure(self, endpoint: str) -> _Failure | None:
        with self._lock:
            for i, failure in enumerate(self._failures):
                if not failure.paths or endpoint in failure.paths:
                    return self._failures.pop(i)
        return None

    def _claim(self, claim_id: str) -> tuple[int, str]:
        with self._lock:
            entry = self._claims.get(claim_id)
            if entry is None or entry[1]:
                return 403, "Forbidden"
            self._claims[claim_id] = (entry[0], True)
            scenario = entry[0]
        return 200, self._issue(scenario)

    def _authenticate(self, header: str | None) -> _Credential | None:
        if not header or not header.startswith("Basic "):
            return None
        try:
            username, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        with self._lock:
            cred = self._credentials.get(username)
        if cred is None or cred.revoked or not secrets.compare_digest(cred.password, password):
            return None
        return cred


def account_set(scenario: Scenario, query: dict[str, list[str]], base_url: str) -> dict[str, Any]:
    """The account set `scenario` answers for `query`, honouring every protocol parameter."""

    def first(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values else None

    start = int(first("start-date") or 0)
    end = first("end-date")
    end_epoch = int(end) if end is not None else None
    want_pending = "pending" in query  # presence, as some real servers test
    balances_only = first("balances-only") == "1"
    wanted_ids = set(query.get("account", []))
    version2 = first("version") == "2"
    accounts = []
    for account in scenario.accounts:
        if wanted_ids and account["id"] not in wanted_ids:
            continue
        out = copy.deepcopy({k: v for k, v in account.items() if k != "transactions"})
        if isinstance(out.get("currency"), str) and out["currency"].startswith("/"):
            out["currency"] = base_url + out["currency"]
        if not balances_only:
            rows = []
            for tx in account.get("transactions", []):
                pending = bool(tx.get("pending")) or not tx.get("posted")
                if pending and (not want_pending or scenario.omit_pending):
                    continue
                when = tx.get("posted") or tx.get("transacted_at") or 0
                if pending and not when:
                    when = start
                if when < start or (end_epoch is not None and when >= end_epoch):
                    continue
                rows.append(copy.deepcopy(tx))
            out["transactions"] = rows
        else:
            out["transactions"] = []
        if version2:
            out.pop("org", None)
            out.setdefault("conn_id", "conn-1")
        accounts.append(out)
    body: dict[str, Any] = {"accounts": accounts}
    if version2:
        body["errlist"] = copy.deepcopy(scenario.errlist) or [
            {"code": "gen.warn", "msg": m} for m in scenario.errors
        ]
        body["connections"] = copy.deepcopy(scenario.connections) or [
            {
                "conn_id": "conn-1",
                "name": "Demo Bank",
                "org_id": "demo",
                "org_url": "",
                "sfin_url": "",
            }
        ]
    else:
        body["errors"] = list(scenario.errors)
        if scenario.errlist:
            body["errlist"] = copy.deepcopy(scenario.errlist)
        if scenario.connections:
            body["connections"] = copy.deepcopy(scenario.connections)
    return body


def _handler_for(server: FakeSimplefinServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Small responses go out at once: with Nagle's algorithm on, each one waited for the
        # client's delayed ACK (about 40 ms per request on loopback).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: never print credentials or tokens

        def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            ctype = "text/plain" if isinstance(body, str) else "application/json"
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _raw(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _cut(self) -> None:
            """200 announcing a long body, part of it, then the socket closes."""
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "5000")
            self.end_headers()
            self.wfile.write(b'{"errors": [], "accounts": [{"id": "ACT-1", ')
            self.wfile.flush()
            self._drop()

        def _drop(self) -> None:
            """Close the socket with a TCP reset, mid-request, without a response."""
            self.close_connection = True
            try:
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
            except OSError:
                pass

        def _handle(self, method: str) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            query = parse_qs(parts.query, keep_blank_values=True)
            path = parts.path.rstrip("/")
            endpoint = path.removeprefix(PREFIX + "/").split("/")[0]
            cred = server._authenticate(self.headers.get("Authorization"))
            server.requests.append(
                RecordedRequest(
                    method,
                    path,
                    query,
                    cred is not None,
                    "Authorization" in self.headers,
                    parts.query,
                )
            )
            failure = server._next_failure(endpoint)
            if failure and failure.delay:
                time.sleep(failure.delay)
            if failure and failure.kind == "slow":
                failure = None
            if failure and failure.kind == "drop":
                return self._drop()
            if failure and failure.kind == "cut":
                return self._cut()
            if failure and failure.kind == "malformed":
                return self._raw(200, b'{"accounts": [ nope')
            if failure and failure.kind == "shape":
                return self._reply(200, failure.body)
            if failure:
                return self._reply(
                    failure.status,
                    "Forbidden" if failure.status == 403 else {"error": f"HTTP {failure.status}"},
                    failure.headers,
                )
            if server.demo is not None and method == "POST" and path.startswith("/demo/"):
                return self._demo(path.removeprefix("/demo/"))
            if method == "POST" and path.startswith(f"{PREFIX}/claim/"):
                status, text = server._claim(path.rsplit("/", 1)[-1])
                return self._reply(status, text)
            if method == "GET" and path.startswith(f"{PREFIX}/currency/"):
                for scenario in [c.scenario for c in server._credentials.values()]:
                    if path.removeprefix(PREFIX) in scenario.currencies:
                        return self._reply(200, scenario.currencies[path.removeprefix(PREFIX)])
                return self._reply(404, {"error": "not found"})
            if method != "GET" or path not in (f"{PREFIX}/info", f"{PREFIX}/accounts"):
                return self._reply(404, {"error": "not found"})
            if cred is None:
                return self._reply(403, "Forbidden")
            if path == f"{PREFIX}/info":
                return self._reply(200, {"versions": server.info_versions})
            return self._reply(200, account_set(cred.scenario, query, server.base_url + PREFIX))

        def _demo(self, command: str) -> None:
            """By-hand controls (only with a demo scenario): new token, revoke, drop, fail."""
            demo = server.demo
            assert demo is not None
            if command == "setup-token":
                return self._reply(200, server.create_setup_token(demo) + "\n")
            if command == "revoke":
                server.revoke()
                return self._reply(200, "every access URL issued so far is revoked\n")
            if command.startswith("drop/"):
                server.drop_connections(int(command.split("/", 1)[1]), paths=("accounts",))
                return self._reply(200, "the next /accounts requests will be dropped\n")
            if command.startswith("fail/"):
                server.fail_with(int(command.split("/", 1)[1]), paths=("accounts",))
                return self._reply(200, "the next /accounts request will fail\n")
            if command == "omit-pending":
                demo.omit_pending = not demo.omit_pending
                return self._reply(200, f"omit_pending={demo.omit_pending}\n")
            return self._reply(404, {"error": "unknown demo command"})

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

    return Handler
