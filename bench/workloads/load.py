"""load: 50 concurrent clients for 10 s (quick) or 60 s (full) of mixed reads and writes (the
transaction list, the account and category lists, a search, single creates, a bulk of 20)
against the production shape's web tier (gunicorn with 2 workers on PostgreSQL, the cache in
Redis when it answers, as compose.yaml runs it), beside the same mix against one process
(gunicorn, 1 worker, 1 thread). Throughput, p50/p99 and errors (anything but the expected
status, or no answer): the target is 0 errors.

The clients are Python threads on the same machine as the server (no other tool needed): they
take CPU the server could use, so the throughput is a floor, not the server's ceiling."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from typing import Any

import requests

from bench.common import BASE_DIR, Report, analyze, household_create, percentile, seed_transactions
from bench.cpu import child_pids, cpu_of, spent
from bench.workloads.create import free_port

CLIENTS = 50
SEED_ROWS = {False: 20_000, True: 100_000}
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
# (operation, weight): what a client does next, drawn at random
MIX = (
    ("list transactions", 35),
    ("list accounts", 10),
    ("list categories", 5),
    ("search", 20),
    ("create", 25),
    ("bulk of 20", 5),
)


def redis_answers() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), 1).close()
        import redis

        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
        return True
    except Exception:
        return False


def gunicorn(workers: int, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "gunicorn", "--config", "python:config.gunicorn",
            "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
            "--workers", str(workers), "--threads", "1", "--backlog", "2048",
            "--log-level", "warning", "--timeout", "120",
        ],
        cwd=BASE_DIR,
        env=env,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{url}/healthz", timeout=2).status_code == 200:
                return proc, url
        except requests.RequestException:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("gunicorn did not start")


def server_pids(master: int) -> list[int]:
    """gunicorn's master and workers."""
    return [master, *child_pids(master)]


def database_pids() -> list[int]:
    """The PostgreSQL backends serving this database, but this process's own (local server)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        )
        return [row[0] for row in cursor.fetchall()]


class Client(threading.Thread):
    def __init__(self, n: int, url: str, hh: Any, until: float, tag: str) -> None:
        super().__init__(daemon=True)
        self.n, self.url, self.until, self.tag = n, url, until, tag
        self.accounts = [str(a.pk) for a in hh.accounts]
        self.session = requests.Session()
        self.session.headers["X-Api-Key"] = hh.key
        self.rng = random.Random(n)
        self.samples: list[tuple[str, float, bool]] = []
        self.errors: Counter[str] = Counter()

    def _item(self, i: int) -> dict[str, Any]:
        return {
            "account_id": self.rng.choice(self.accounts),
            "date": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}",
            "amount": f"{self.rng.randrange(100, 50000) / 100:.2f}",
            "name": f"Load {self.tag} {self.n}-{i}",
        }

    def request(self, op: str, i: int) -> requests.Response:
        base = f"{self.url}/api/v1"
        if op == "list transactions":
            page = self.rng.randrange(1, 20)
            return self.session.get(f"{base}/transactions", params={"per_page": 50, "page": page})
        if op == "list accounts":
            return self.session.get(f"{base}/accounts")
        if op == "list categories":
            return self.session.get(f"{base}/categories")
        if op == "search":
            word = self.rng.choice(["coffee", "rent", "groceries", "taxi", "pharmacy"])
            return self.session.get(f"{base}/transactions", params={"search": word})
        if op == "create":
            return self.session.post(f"{base}/transactions", json={"transaction": self._item(i)})
        items = [self._item(i * 100 + k) for k in range(20)]
        return self.session.post(f"{base}/transactions/bulk", json={"transactions": items})

    def run(self) -> None:
        ops, weights = zip(*MIX, strict=True)
        expected = {"create": 201}
        i = 0
        while time.monotonic() < self.until:
            op = self.rng.choices(ops, weights)[0]
            i += 1
            t0 = time.perf_counter()
            try:
                response = self.request(op, i)
                ok = response.status_code == expected.get(op, 200)
                if not ok:
                    self.errors[f"{op}: {response.status_code}"] += 1
            except requests.RequestException as exc:
                ok = False
                self.errors[f"{op}: {exc.__class__.__name__}"] += 1
            self.samples.append((op, time.perf_counter() - t0, ok))


def drive(url: str, hh: Any, seconds: float, master: int) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:6]
    # warm every worker (imports, connections) before the clock starts
    warm = Client(-1, url, hh, 0, tag)
    for _ in range(8):
        warm.request("list transactions", 0)
    until = time.monotonic() + seconds
    clients = [Client(n, url, hh, until, tag) for n in range(CLIENTS)]
    load_before = os.getloadavg()[0]
    cpu_before = time.process_time()
    server_before = cpu_of(server_pids(master))
    db_before = cpu_of(database_pids())
    # backends come and go (CONN_MAX_AGE): read them every half second, keep each one's last
    db_last = dict(db_before)
    stop = threading.Event()

    def sample_database() -> None:
        from django.db import connection

        while not stop.wait(0.5):
            db_last.update(cpu_of(database_pids()))
        connection.close()

    sampler = threading.Thread(target=sample_database, daemon=True)
    sampler.start()
    started = time.perf_counter()
    for client in clients:
        client.start()
    for client in clients:
        client.join(seconds + 180)
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - cpu_before
    server_cpu = sum(spent(server_before, cpu_of(server_pids(master))))
    stop.set()
    sampler.join(10)
    db_last.update(cpu_of(database_pids()))
    db_cpu = sum(spent(db_before, db_last))
    samples = [s for c in clients for s in c.samples]
    errors: Counter[str] = sum((c.errors for c in clients), Counter())
    latencies = [secs for _, secs, _ in samples]
    per_op = {
        op: round(percentile([s for o, s, _ in samples if o == op], 99) * 1000) for op, _ in MIX
    }
    return {
        "requests": len(samples),
        "seconds": round(elapsed, 1),
        "requests_per_s": round(len(samples) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "errors": sum(errors.values()),
        # CPU per request of gunicorn and of the PostgreSQL backends serving it: on an idle
        # machine the throughput ceiling is about cores / (their sum)
        "server_cpu_ms_per_request": round(1000 * server_cpu / max(1, len(samples)), 1),
        "db_cpu_ms_per_request": round(1000 * db_cpu / max(1, len(samples)), 1),
        "error_kinds": dict(errors),
        "p99_ms_per_operation": per_op,
        # the clients' own CPU (a share of one core) and the machine's load when they started
        "client_cpu_pct": round(100 * client_cpu / elapsed),
        "load_average_1m": round(load_before, 1),
    }


def run(*, full: bool, backend: str) -> Report:
    report = Report("load", backend, full)
    seconds = 60 if full else 10
    columns = ["shape", "clients", "seconds", "requests", "requests_per_s", "p50_ms", "p99_ms"]
    columns += ["server_cpu_ms_per_request", "db_cpu_ms_per_request", "errors"]
    if backend != "postgresql":
        report.add(shape="skipped: the production shape runs on PostgreSQL")
        report.print_table(columns)
        return report
    hh = household_create("load", accounts=5)
    seed_transactions(hh, SEED_ROWS[full])
    analyze()
    env = dict(os.environ)
    cache = "Redis" if redis_answers() else "file cache (Redis not reachable)"
    if cache == "Redis":
        env["CACHE_URL"] = REDIS_URL
    shapes = (
        ("production: gunicorn 2 workers", 2),
        ("single process: gunicorn 1 worker, 1 thread", 1),
    )
    for shape, workers in shapes:
        proc, url = gunicorn(workers, env)
        try:
            result = drive(url, hh, seconds, proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        moved = ("error_kinds", "p99_ms_per_operation", "client_cpu_pct", "load_average_1m")
        extra = {k: result.pop(k) for k in moved}
        report.add(shape=shape, clients=CLIENTS, **result)
        report.extra[shape] = extra
    errors = sum(row["errors"] for row in report.rows)
    report.extra.update(
        seed_rows=SEED_ROWS[full],
        cache=cache,
        mix=dict(MIX),
        target=f"0 errors: {'yes' if errors == 0 else 'NO'} ({errors})",
    )
    report.print_table(columns)
    for shape, _ in shapes:
        info = report.extra[shape]
        print(f"  {shape}: p99 per operation (ms) {info['p99_ms_per_operation']}")
        print(
            f"  {shape}: client CPU {info['client_cpu_pct']}% of a core,"
            f" load average {info['load_average_1m']} at the start"
        )
        if report.extra[shape]["error_kinds"]:
            print(f"  {shape}: errors {report.extra[shape]['error_kinds']}")
    print(f"  target {report.extra['target']}")
    return report
