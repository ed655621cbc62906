"""create: single POSTs from concurrent clients and bulk POSTs, through a real gunicorn server
(one sync worker per core), against the bare floor (bench/floors.py): the same rows, 1,000
per transaction, COPYed / executemany'd into a plain table with no index but the key."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from bench.common import BASE_DIR, Report, household_create, latency_summary, percentile
from bench.cpu import CpuMeter, child_pids, cpu_meter

TARGET_BULK_RATIO = 2.0
TARGET_SEED_ROWS_PER_S = 20_000
_SUMMARY = re.compile(rb'"summary":\{"created":(\d+)')  # a bulk answer's last bytes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gunicorn_start() -> tuple[subprocess.Popen, str]:
    port = free_port()
    workers = os.cpu_count() or 1
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "gunicorn", "--config", "python:config.gunicorn",
            "config.wsgi:application",
            "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
            "--log-level", "warning", "--timeout", "120",
        ],
        cwd=BASE_DIR,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{url}/healthz", timeout=2).status_code < 500:
                return proc, url
        except requests.RequestException:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("gunicorn did not start")


def item(hh: Any, i: int, tag: str) -> dict[str, Any]:
    return {
        "account_id": str(hh.accounts[i % len(hh.accounts)].pk),
        "date": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}",
        "amount": f"{(i % 5000) / 100 + 1:.2f}",
        "name": f"Bench purchase {i}",
        "category_id": str(hh.categories[i % len(hh.categories)].pk),
        "external_id": f"{tag}-{i}" if i % 2 else None,
    }


def run_clients(fn: Any, jobs: list[Any], clients: int) -> tuple[float, list[float]]:
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        latencies = list(pool.map(fn, jobs))
    return time.perf_counter() - start, latencies


FLOOR_COLUMNS = [
    "id", "family_id", "account_id", "date", "amount", "currency", "name", "category_id",
    "external_id", "source", "created_at", "updated_at",
]  # fmt: skip


def bare_floor(hh: Any, rows: int, batch: int = 1000) -> float:
    """Seconds to write `rows` of the same items as tuples, `batch` per transaction, COPYed
    (PostgreSQL) or executemany'd (SQLite) into a plain table (bench/floors.py: the ledger
    table's columns, a primary key, no other index or trigger)."""
    import datetime as dt

    from bench.common import vendor
    from bench.floors import bare_load, ident

    now = dt.datetime.now(dt.UTC)
    stamp = now.isoformat() if vendor() == "postgresql" else now.strftime("%Y-%m-%d %H:%M:%S")
    total = 0.0
    for offset in range(0, rows, batch):

        def tuples(offset: int = offset) -> Any:
            for i in range(offset, min(rows, offset + batch)):
                it = item(hh, i, "floor")
                yield (
                    ident(uuid.uuid4()), ident(hh.family), ident(uuid.UUID(it["account_id"])),
                    it["date"], it["amount"], "USD", it["name"],
                    ident(uuid.UUID(it["category_id"])), it["external_id"],
                    "api" if it["external_id"] else None, stamp, stamp,
                )  # fmt: skip

        secs, _ = bare_load(FLOOR_COLUMNS, tuples())
        total += secs
    return total


def _per_request(meter: CpuMeter, count: int) -> dict[str, Any]:
    """Each side's CPU per request in ms, and the most rows a second the CPU they took allows
    on this machine's cores, whatever the number of clients (bench/cpu.py)."""
    cpu = meter.sample
    assert cpu is not None
    out = {
        "client_cpu_ms": round(cpu.ours / count * 1000, 1),
        "server_cpu_ms": "" if cpu.others is None else round(cpu.others / count * 1000, 1),
        "db_cpu_ms": "" if cpu.database is None else round(cpu.database / count * 1000, 1),
    }
    out["cpu_max_rows_per_s"] = round(count * 1000 * cpu.cores / cpu.total) if cpu.total else ""
    return out


def run(*, full: bool, backend: str) -> Report:
    from finance.models import Transaction

    singles = 5000 if full else 300
    bulk_requests = 100 if full else 4  # full: 100,000 rows seeded by each client count
    clients = 8
    report = Report("create", backend, full)
    hh = household_create("create")
    proc, url = gunicorn_start()
    headers = {"X-Api-Key": hh.key}
    sessions: dict[int, requests.Session] = {}
    run_tag = uuid.uuid4().hex[:6]

    def session() -> requests.Session:
        import threading

        ident = threading.get_ident()
        if ident not in sessions:
            sessions[ident] = requests.Session()
            sessions[ident].headers.update(headers)
            sessions[ident].headers["Content-Type"] = "application/json"
        return sessions[ident]

    # Latency runs from sending the request to holding the whole response: the client's own
    # JSON encoding of the body and decoding of the answer are outside it.
    def single(i: int) -> float:
        body = json.dumps({"transaction": item(hh, i, f"s{run_tag}")})
        t0 = time.perf_counter()
        r = session().post(f"{url}/api/v1/transactions", data=body, timeout=120)
        elapsed = time.perf_counter() - t0
        assert r.status_code == 201, (r.status_code, r.text[:300])
        return elapsed

    # A bulk phase's bodies are encoded before its clock starts, as a seeder holds its data,
    # and each answer is checked by its summary (the last bytes), not decoded whole: this
    # client shares the machine's cores with the server, and building and decoding 1,000
    # items was 11.5 of its 13.4 ms a request (bench/README.md). Every row is counted in the
    # database after the phases.
    bodies: dict[int, bytes] = {}

    def bodies_build(jobs: range) -> list[int]:
        for n in jobs:
            payload = {"transactions": [item(hh, n * 1000 + i, f"b{run_tag}") for i in range(1000)]}
            bodies[n] = json.dumps(payload).encode()
        return list(jobs)

    def bulk(n: int) -> float:
        body = bodies.pop(n)
        t0 = time.perf_counter()
        r = session().post(f"{url}/api/v1/transactions/bulk", data=body, timeout=300)
        elapsed = time.perf_counter() - t0
        summary = _SUMMARY.search(r.content[-200:])
        assert r.status_code == 200 and summary and int(summary[1]) == 1000, r.text[-300:]
        return elapsed

    try:
        single(-1)  # warm the workers
        secs, lat = run_clients(single, list(range(singles)), clients)
        s = latency_summary(lat)
        report.add(
            mode=f"single POST x{singles}", clients=clients, requests_per_s=round(singles / secs),
            txns_per_s=round(singles / secs), p50_ms=s["p50_ms"], p99_ms=s["p99_ms"],
        )  # fmt: skip
        # CPU per request of each side: the client (this process), the gunicorn workers,
        # the database (bench/cpu.py): the seeding rate the machine's cores allow.
        workers = child_pids(proc.pid)
        stored = Transaction.objects.filter(family=hh.family).count()
        jobs = bodies_build(range(bulk_requests))
        with cpu_meter(workers) as meter1:
            secs1, lat1 = run_clients(bulk, jobs, 1)
        b1 = latency_summary(lat1)
        report.add(
            mode=f"bulk POST x{bulk_requests} (1000 each)", clients=1,
            requests_per_s=round(bulk_requests / secs1, 2),
            txns_per_s=round(bulk_requests * 1000 / secs1),
            p50_ms=b1["p50_ms"], p99_ms=b1["p99_ms"], **_per_request(meter1, bulk_requests),
        )  # fmt: skip
        jobs = bodies_build(range(bulk_requests, 2 * bulk_requests))
        with cpu_meter(workers) as meter2:
            secs2, lat2 = run_clients(bulk, jobs, 2)
        added = Transaction.objects.filter(family=hh.family).count() - stored
        assert added == 2 * bulk_requests * 1000, added
        b2 = latency_summary(lat2)
        per2 = _per_request(meter2, bulk_requests)
        report.add(
            mode=f"bulk POST x{bulk_requests} (1000 each)", clients=2,
            requests_per_s=round(bulk_requests / secs2, 2),
            txns_per_s=round(bulk_requests * 1000 / secs2),
            p50_ms=b2["p50_ms"], p99_ms=b2["p99_ms"], **per2,
        )  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    # The same bulk requests in-process (no socket, no client threads): the server's own time.
    from django.test import Client

    local = Client()
    local_lat = []
    for n in range(2 * bulk_requests, 3 * bulk_requests):
        payload = {"transactions": [item(hh, n * 1000 + i, f"l{run_tag}") for i in range(1000)]}
        body = json.dumps(payload)
        t0 = time.perf_counter()
        r = local.post(
            "/api/v1/transactions/bulk", body, content_type="application/json",
            HTTP_X_API_KEY=hh.key,
        )  # fmt: skip
        local_lat.append(time.perf_counter() - t0)
        assert r.status_code == 200 and r.json()["summary"]["created"] == 1000
    bl = latency_summary(local_lat)
    report.add(
        mode=f"bulk in-process x{bulk_requests} (1000 each)", clients=1,
        requests_per_s=round(bulk_requests / sum(local_lat), 2),
        txns_per_s=round(bulk_requests * 1000 / sum(local_lat)),
        p50_ms=bl["p50_ms"], p99_ms=bl["p99_ms"],
    )  # fmt: skip
    floor_rows = bulk_requests * 1000
    floor_secs = bare_floor(hh, floor_rows)
    floor_per_1000 = floor_secs / (floor_rows / 1000)
    report.add(
        mode=f"bare floor x{floor_rows} (1000 per transaction)", clients=1,
        requests_per_s="", txns_per_s=round(floor_rows / floor_secs),
        p50_ms=round(floor_per_1000 * 1000, 2), p99_ms="",
    )  # fmt: skip
    ratio = percentile(lat1, 50) / floor_per_1000
    single_ratio = (singles / secs) and (floor_rows / floor_secs) / (singles / secs)
    local_ratio = percentile(local_lat, 50) / floor_per_1000
    report.extra = {
        "bulk_vs_floor_ratio": round(ratio, 2),
        "bulk_in_process_vs_floor_ratio": round(local_ratio, 2),
        "single_vs_floor_ratio": round(single_ratio, 1),
        "target_bulk_ratio": TARGET_BULK_RATIO,
        "gunicorn_workers": os.cpu_count(),
        "bulk_2_clients_rows_per_s": round(bulk_requests * 1000 / secs2),
        "target_rows_per_s_postgresql": TARGET_SEED_ROWS_PER_S,
        "note": "ratio = bulk request p50 (1000 rows, 1 client) / bare floor per 1000 rows "
        "(bench/floors.py: COPY / executemany into a plain table)",
    }
    # What the CPU taken allows (bench/cpu.py): a request's latency is at least its worker's
    # CPU for it (one process, one core), and no number of clients seeds faster than the cores
    # can do every side's work.
    cpu1, cpu2 = meter1.sample, meter2.sample
    assert cpu1 is not None and cpu2 is not None
    if cpu1.others:
        report.extra["bulk_server_cpu_vs_floor_ratio"] = round(
            cpu1.others / bulk_requests / floor_per_1000, 2
        )
    report.extra["bulk_cpu_max_rows_per_s"] = per2["cpu_max_rows_per_s"]
    report.print_table(
        [
            "mode", "clients", "requests_per_s", "txns_per_s", "p50_ms", "p99_ms",
            "client_cpu_ms", "server_cpu_ms", "db_cpu_ms", "cpu_max_rows_per_s",
        ]
    )  # fmt: skip
    met = "yes" if ratio <= TARGET_BULK_RATIO else "NO"
    seeded = max(bulk_requests * 1000 / secs1, bulk_requests * 1000 / secs2)
    print(
        f"bulk endpoint: {seeded:,.0f} rows/s at best (target >= {TARGET_SEED_ROWS_PER_S:,} on"
        f" PostgreSQL: {'yes' if seeded >= TARGET_SEED_ROWS_PER_S else 'NO'}); the CPU its"
        f" requests took allows {report.extra['bulk_cpu_max_rows_per_s']:,} rows/s on"
        f" {cpu2.cores} cores"
    )
    if cpu1.others:
        print(
            f"a bulk request's own server CPU is"
            f" {report.extra['bulk_server_cpu_vs_floor_ratio']:.2f}x the floor per 1,000 rows:"
            " no p50 is below it"
        )
    print(
        f"bulk create / bare floor = {ratio:.2f} through gunicorn, {local_ratio:.2f} in-process"
        f" (target <= {TARGET_BULK_RATIO}: {met}); "
        f"single POSTs are {single_ratio:.0f}x slower per row than the floor"
    )
    return report
