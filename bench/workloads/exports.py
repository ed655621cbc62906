"""export: a household of 100,000 (quick) or 1,000,000 (full) transactions exported with
`manage.py export_household` and restored into a new household with `manage.py
restore_household` (verify, write in one transaction through the ledger batch, read back),
against the floor: the database's own dump of the same tables and its load into an empty
database (`pg_dump -t ...` / `psql` on PostgreSQL, `sqlite3 .dump` / `sqlite3` on SQLite).

Each side runs as its own process; peak RSS is that process's own (VmHWM), so the seeding
done here does not count. The commands' times include Django's start (about a second)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import BASE_DIR, Report, household_create, seed_transactions

TARGET_PEAK_MB = 300
TABLES = (
    "finance_account",
    "finance_category",
    "finance_merchant",
    "finance_tag",
    "finance_transaction",
    "finance_transaction_tags",
)


def _high_water_mb(pid: int) -> float | None:
    """The process's peak resident memory so far (VmHWM: its own, reset by exec)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def timed_process(cmd: list[str], **kwargs: Any) -> tuple[float, float]:
    """Run `cmd` to its end: (seconds, the process's own peak RSS in MB, read from /proc every
    50 ms while it runs: wait4's ru_maxrss would report this bench's own, which a child
    inherits across fork and exec)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, **kwargs)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _high_water_mb(proc.pid) or 0.0)
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError(f"{cmd[:3]} exited with {proc.returncode}")
    return seconds, round(peak, 1)


def manage(*args: str) -> list[str]:
    return [sys.executable, str(BASE_DIR / "manage.py"), *args]


def floor_postgres(tmp: Path) -> tuple[tuple[float, float], tuple[float, float], int]:
    from django.db import connection

    params = connection.get_connection_params()
    dbname = connection.settings_dict["NAME"]
    conn = ["-h", params.get("host") or "127.0.0.1", "-p", str(params.get("port") or 5432)]
    conn += ["-U", params.get("user") or "postgres"]
    tables = [arg for t in TABLES for arg in ("-t", t)]
    data = tmp / "floor-data.sql"
    schema = tmp / "floor-schema.sql"
    subprocess.run(
        ["pg_dump", *conn, "--schema-only", *tables, "-f", str(schema), dbname], check=True
    )
    dump = timed_process(["pg_dump", *conn, "--data-only", *tables, "-f", str(data), dbname])
    scratch = f"{dbname}_floor"
    admin = ["psql", *conn, "-q", "-d", "postgres", "-c"]
    subprocess.run([*admin, f'DROP DATABASE IF EXISTS "{scratch}"'], check=True)
    subprocess.run([*admin, f'CREATE DATABASE "{scratch}"'], check=True)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    try:
        # the tables as they are, their triggers' functions aside (what the floor skips)
        subprocess.run(
            ["psql", *conn, "-q", "-d", scratch, "-f", str(schema)], check=False, **quiet
        )
        load = timed_process(["psql", *conn, "-q", "-d", scratch, "-f", str(data)], **quiet)
    finally:
        subprocess.run([*admin, f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)'], check=True)
    return dump, load, data.stat().st_size


def floor_sqlite(tmp: Path) -> tuple[tuple[float, float], tuple[float, float], int]:
    from django.db import connection

    dump_file = tmp / "floor.sql"
    with dump_file.open("w") as out:
        dump = timed_process(
            ["sqlite3", connection.settings_dict["NAME"], f".dump {' '.join(TABLES)}"], stdout=out
        )
    scratch = tmp / "floor.sqlite3"
    with dump_file.open() as source:
        load = timed_process(["sqlite3", str(scratch)], stdin=source)
    return dump, load, dump_file.stat().st_size


def run(*, full: bool, backend: str) -> Report:
    from finance.models import User

    rows = 1_000_000 if full else 100_000
    report = Report("export", backend, full)
    tmp = Path(tempfile.mkdtemp(prefix="bench-export-"))
    hh = household_create("export")
    seconds = seed_transactions(hh, rows)
    print(f"seeded {rows:,} transactions in {seconds:.1f}s", flush=True)
    email = User.objects.filter(family=hh.family).values_list("email", flat=True).get()
    archive = tmp / "household.zip"
    env = {**os.environ}
    quiet = {"stdout": subprocess.DEVNULL, "env": env}
    floor = floor_postgres(tmp) if backend == "postgresql" else floor_sqlite(tmp)
    (dump_s, dump_mb), (load_s, load_mb), dump_bytes = floor
    tool = "pg_dump -t" if backend == "postgresql" else "sqlite3 .dump"
    loader = "psql -f" if backend == "postgresql" else "sqlite3 < dump"
    export_s, export_mb = timed_process(
        manage("export_household", "--email", email, str(archive)), **quiet
    )
    restore_s, restore_mb = timed_process(
        manage("restore_household", str(archive), "--email", f"restored-{email}"), **quiet
    )
    for phase, secs, peak, floor_secs, size in (
        (f"floor: {tool}", dump_s, dump_mb, dump_s, dump_bytes),
        ("export_household", export_s, export_mb, dump_s, archive.stat().st_size),
        (f"floor: {loader}", load_s, load_mb, load_s, dump_bytes),
        ("restore_household", restore_s, restore_mb, load_s, archive.stat().st_size),
    ):
        target = ""
        if not phase.startswith("floor"):
            target = f"peak < {TARGET_PEAK_MB} MB: {'yes' if peak < TARGET_PEAK_MB else 'NO'}"
        report.add(
            phase=phase, rows=rows, seconds=round(secs, 2), rows_per_s=round(rows / secs),
            peak_rss_mb=peak, bytes=size, ratio=round(secs / floor_secs, 2), target=target,
        )  # fmt: skip
    report.extra.update(rows=rows, archive_bytes=archive.stat().st_size, dump_bytes=dump_bytes)
    report.print_table(
        ["phase", "rows", "seconds", "rows_per_s", "peak_rss_mb", "bytes", "ratio", "target"]
    )
    for leftover in tmp.iterdir():
        leftover.unlink()
    tmp.rmdir()
    return report
