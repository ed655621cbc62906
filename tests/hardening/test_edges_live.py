"""The service's edges as a client meets them through gunicorn (the production server, with
config/gunicorn.py, two worker processes, the embedded default's shared file cache): counters
shared by the workers, query-string secrets kept out of the logs, chunked bodies held to the
body limit, and JSON for what gunicorn refuses itself."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
# The server below always runs on a SQLite database of its own, so `make test`'s PostgreSQL
# pass would repeat the SQLite pass's work exactly.
pytestmark = pytest.mark.skipif(
    os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="the gunicorn server uses its own SQLite database: run in the SQLite pass",
)
PASSWORD = "pw-edges-123456"
SETUP = f"""
from finance.models import ApiKey
from finance.services.api_keys import api_key_create, household_user_ensure
user = household_user_ensure(email="edges@example.com", family_name="Edges", password="{PASSWORD}")
for name in ("burst", "fresh", "spare"):
    print(api_key_create(user=user, name=name, scope=ApiKey.SCOPE_READ_WRITE)[1])
"""
# The pid shows which worker served each request; the key header is asked for on purpose.
ACCESS_FORMAT = '%(p)s %(s)s "%(r)s" "%(f)s" key=%({x-api-key}i)s'
BODY_LIMIT = 2000


@dataclass
class Server:
    url: str
    port: int
    keys: list[str]
    access_log: Path
    output: Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("edges")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CACHE_URL"))},
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATA_DIR": str(data),
        "API_RATE_LIMIT": "1000",
        # A day's window: a burst never straddles two windows (but at midnight UTC).
        "API_RATE_LIMIT_WINDOW": "86400",
        "API_MAX_BODY_BYTES": str(BODY_LIMIT),
    }
    for args in (("migrate", "--noinput", "-v0"), ("shell", "-c", SETUP)):
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    keys = re.findall(r"pfk_\S+", done.stdout)
    assert len(keys) == 3, done.stdout
    port = free_port()
    access_log, output = data / "access.log", data / "gunicorn.out"
    with open(output, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "gunicorn", "--config", "python:config.gunicorn",
                "config.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "2",
                "--access-logfile", str(access_log), "--access-logformat", ACCESS_FORMAT,
                "--no-control-socket",
            ],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, output.read_text()[-2000:]
            time.sleep(0.2)
        yield Server(url, port, keys, access_log, output)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def raw_request(server: Server, data: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def logs(server: Server) -> str:
    time.sleep(0.3)  # gunicorn writes the access line after the response
    return server.access_log.read_text() + server.output.read_text()


def test_the_rate_limit_is_one_count_across_the_worker_processes(server):
    """1,100 requests on one key, limit 1,000, from 8 clients over both workers: exactly 1,000
    pass. With a counter per process each worker would let up to 1,000 through."""
    key = server.keys[0]

    def get(_: int) -> tuple[int, str, str]:
        r = requests.get(f"{server.url}/api/v1/accounts", headers={"X-Api-Key": key}, timeout=30)
        return r.status_code, r.headers["X-RateLimit-Remaining"], r.headers["X-RateLimit-Reset"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(get, range(1100)))
    statuses = Counter(status for status, _, _ in results)
    assert statuses == {200: 1000, 429: 100}
    assert len({reset for _, _, reset in results}) == 1
    remaining = sorted(int(left) for status, left, _ in results if status == 200)
    assert remaining == list(range(1000))  # every count handed out once
    pids = Counter(
        line.split()[0]
        for line in server.access_log.read_text().splitlines()
        if "/api/v1/accounts" in line
    )
    assert len(pids) == 2 and min(pids.values()) > 50, pids
    fresh = requests.get(
        f"{server.url}/api/v1/accounts", headers={"X-Api-Key": server.keys[1]}, timeout=30
    )
    assert fresh.status_code == 200 and fresh.headers["X-RateLimit-Remaining"] == "999"


def test_the_login_lockout_counts_failures_across_the_worker_processes(server):
    def attempt(password: str) -> int:
        session = requests.Session()
        page = session.get(f"{server.url}/admin/login/", timeout=30)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        r = session.post(
            f"{server.url}/admin/login/",
            data={
                "username": "edges@example.com",
                "password": password,
                "csrfmiddlewaretoken": token,
            },
            headers={"Referer": f"{server.url}/admin/login/"},
            allow_redirects=False,
            timeout=30,
        )
        return r.status_code

    with ThreadPoolExecutor(max_workers=5) as pool:
        assert list(pool.map(attempt, ["wrong"] * 5)) == [200] * 5
    assert attempt(PASSWORD) == 429


def test_query_string_secrets_never_reach_the_logs(server):
    secrets = {
        "api_key": "pfk_abcdefgh_QuerySecretNumberOne",
        "token": "TokenSecretNumberTwo",
        "access_url": "https://user:AccessSecretThree@bridge.example/simplefin",
        "setup_token": "SetupSecretNumberFour",
        "key": "PlainKeySecretFive",
    }
    for name, value in secrets.items():
        r = requests.get(
            f"{server.url}/api/v1/accounts",
            params={"page": "1", name: value},
            headers={"Referer": f"https://elsewhere.example/?{name}=Referer{value}"},
            timeout=30,
        )
        assert r.status_code == 401
    requests.get(f"{server.url}/api/v1/nope?api_key=NotFoundSecretSix", timeout=30)
    requests.get(
        f"{server.url}/api/v1/accounts",
        headers={"X-Api-Key": "pfk_zzzzzzzz_HeaderSecretSeven"},
        timeout=30,
    )
    text = logs(server)
    assert "/api/v1/accounts?page=1&api_key=[REDACTED]" in text
    assert "key=[REDACTED]" in text  # the key header asked for by the log format
    for leaked in [*secrets.values(), "NotFoundSecretSix", "HeaderSecretSeven"]:
        for part in re.findall(r"[A-Za-z]*Secret[A-Za-z]*", leaked):
            assert part not in text, part


def chunked(body: bytes, size: int = 512):
    for i in range(0, len(body), size):
        yield body[i : i + size]


def test_a_chunked_body_is_read_and_held_to_the_body_limit(server):
    headers = {"X-Api-Key": server.keys[2], "Content-Type": "application/json"}
    url = f"{server.url}/api/v1/accounts"

    def body(name: str) -> bytes:
        account = {"name": name, "account_type": "depository", "currency": "USD"}
        return json.dumps({"account": account}).encode()

    small = requests.post(url, data=chunked(body("Chunked")), headers=headers, timeout=30)
    assert small.request.headers["Transfer-Encoding"] == "chunked"
    assert small.status_code == 201, small.text
    assert small.json()["name"] == "Chunked"

    large = requests.post(url, data=chunked(body("x" * BODY_LIMIT)), headers=headers, timeout=30)
    assert large.request.headers["Transfer-Encoding"] == "chunked"
    assert large.status_code == 413, large.text
    assert large.json()["error"] == "payload_too_large"
    assert large.json()["details"] == {"limit_bytes": BODY_LIMIT}
    # The same body with a Content-Length answers alike.
    sized = requests.post(url, data=body("x" * BODY_LIMIT), headers=headers, timeout=30)
    assert (sized.status_code, sized.json()) == (413, large.json())


@pytest.mark.parametrize(
    ("request_bytes", "status", "error"),
    [
        (b"GET /api/v1/" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
        (
            b"GET /api/v1/accounts HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n",
            431,
            "headers_too_large",
        ),
        (
            b"POST /api/v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\x00"
            b"<script>\r\nContent-Length: 2\r\n\r\n{}",
            400,
            "bad_request",
        ),
    ],
    ids=["long-path", "large-header", "nul-in-content-type"],
)
def test_what_gunicorn_refuses_answers_the_json_error_shape(server, request_bytes, status, error):
    got, headers, body = raw_request(server, request_bytes)
    assert got == status
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body)
    parsed = json.loads(body)
    assert set(parsed) == {"error", "message"} and parsed["error"] == error
    assert b"<" not in body and b"aaaa" not in body and b"bbbb" not in body


def test_a_long_list_filter_still_reaches_the_api(server):
    """Longer than gunicorn's default request line (4094), within ours."""
    ids = ",".join(["00000000-0000-0000-0000-000000000000"] * 150)
    r = requests.get(
        f"{server.url}/api/v1/transactions",
        params={"account_ids": ids},
        headers={"X-Api-Key": server.keys[2]},
        timeout=30,
    )
    assert len(r.request.url) > 5000
    assert r.status_code in (200, 422), r.text
    assert r.headers["Content-Type"].startswith("application/json")
