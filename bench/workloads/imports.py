"""import: a CSV of 100,000 (quick) or 1,000,000 (full) rows through parse, publish and verify,
against the floor: the same rows parsed with the csv module and bulk-inserted (COPY on
PostgreSQL, executemany on SQLite).

The pipeline half needs the imports app's services. Until they exist on the branch this runs
from, the workload measures the floor and reports the pipeline as skipped. To wire it, provide
`imports.bench_hooks.run_pipeline(*, user, account, csv_path) -> dict[str, float]` returning
the seconds of each phase (`parse`, `publish`, `verify`); this module times nothing else."""

from __future__ import annotations

import csv
import importlib
import os
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench.common import Report, constant_defaults, household_create, peak_rss_mb

TARGET_PUBLISH_RATIO = 3.0
TARGET_PEAK_MB = 300
HEADER = ["date", "amount", "name", "category", "notes"]


def csv_write(path: Path, rows: int) -> None:
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(HEADER)
        for i in range(rows):
            out.writerow(
                [
                    f"20{16 + i % 10}-{1 + i % 12:02d}-{1 + i % 28:02d}",
                    f"{(i % 90000) / 100 - 300:.2f}",
                    f"Imported purchase {i}",
                    f"Category {i % 20}",
                    "" if i % 3 else f"note {i}",
                ]
            )


def floor(hh: Any, path: Path) -> tuple[float, int]:
    """Parse the CSV with the csv module and bulk-insert it: the fastest a Django app can go."""
    import uuid

    from django.db import connection, transaction

    from finance.models import Transaction

    pg = connection.vendor == "postgresql"
    table = Transaction._meta.db_table
    cols = [
        "id", "family_id", "account_id", "date", "amount", "currency", "name", "notes",
        "kind", "pending", "excluded", "created_at", "updated_at",
    ]  # fmt: skip
    constants = constant_defaults(Transaction, cols)
    extra = tuple(constants.values())
    cols = cols + list(constants)
    family = str(hh.family.pk) if pg else hh.family.pk.hex
    account = str(hh.accounts[0].pk) if pg else hh.accounts[0].pk.hex
    now = "2026-01-01T00:00:00+00:00" if pg else "2026-01-01 00:00:00"
    start = time.perf_counter()
    n = 0
    with transaction.atomic(), path.open(newline="") as fh, connection.cursor() as cur:
        reader = csv.reader(fh)
        next(reader)
        if pg:
            with cur.cursor.copy(f'COPY "{table}" ({", ".join(cols)}) FROM STDIN') as copy:
                for date, amount, name, _category, notes in reader:
                    copy.write_row(
                        (str(uuid.uuid4()), family, account, date, amount, "USD", name,
                         notes or None, "standard", False, False, now, now, *extra)
                    )  # fmt: skip
                    n += 1
        else:
            marks = ", ".join("?" * len(cols))
            batch: list[tuple] = []
            sql = f'INSERT INTO "{table}" ({", ".join(cols)}) VALUES ({marks})'
            for date, amount, name, _category, notes in reader:
                # The column holds canonical text on SQLite (core/exact.py): four places.
                batch.append(
                    (uuid.uuid4().hex, family, account, date, f"{Decimal(amount):.4f}", "USD", name,
                     notes or None, "standard", 0, 0, now, now, *extra)
                )  # fmt: skip
                n += 1
                if len(batch) >= 10_000:
                    cur.executemany(sql, batch)
                    batch.clear()
            if batch:
                cur.executemany(sql, batch)
    return time.perf_counter() - start, n


def run(*, full: bool, backend: str) -> Report:
    rows = 1_000_000 if full else 100_000
    report = Report("import", backend, full)
    tmp = Path(tempfile.mkdtemp(prefix="bench-import-"))
    path = tmp / "rows.csv"
    t0 = time.perf_counter()
    csv_write(path, rows)
    print(
        f"wrote {rows:,} CSV rows ({path.stat().st_size / 1e6:.0f} MB)"
        f" in {time.perf_counter() - t0:.1f}s"
    )
    floor_hh = household_create("import-floor", accounts=1)
    rss_before = peak_rss_mb()
    floor_secs, n = floor(floor_hh, path)
    report.add(
        phase="floor: csv + " + ("COPY" if backend == "postgresql" else "executemany"),
        rows=n, seconds=round(floor_secs, 2), rows_per_s=round(n / floor_secs),
        peak_rss_mb=peak_rss_mb(), ratio="1.0", target="",
    )  # fmt: skip
    try:
        hooks = importlib.import_module("imports.bench_hooks")
    except ImportError:
        hooks = None
    if hooks is None or not hasattr(hooks, "run_pipeline"):
        report.add(
            phase="pipeline (parse/publish/verify)", rows=rows, seconds="", rows_per_s="",
            peak_rss_mb="", ratio="", target="skipped: no imports.bench_hooks on this branch",
        )  # fmt: skip
    else:
        hh = household_create("import")
        from finance.models import User

        user = User.objects.filter(family=hh.family).first()
        phases = hooks.run_pipeline(user=user, account=hh.accounts[0], csv_path=path)
        for phase, secs in phases.items():
            ratio = secs / floor_secs
            target = ""
            if phase == "publish":
                met = "yes" if ratio <= TARGET_PUBLISH_RATIO else "NO"
                target = f"<= {TARGET_PUBLISH_RATIO}x: {met}"
            report.add(
                phase=phase, rows=rows, seconds=round(secs, 2), rows_per_s=round(rows / secs),
                peak_rss_mb=peak_rss_mb(), ratio=round(ratio, 2), target=target,
            )  # fmt: skip
        peak = peak_rss_mb()
        report.extra["peak_rss_target"] = (
            f"< {TARGET_PEAK_MB} MB at 1M rows: "
            f"{'yes' if peak < TARGET_PEAK_MB else 'NO'} ({peak} MB)"
        )
    report.extra.update(rows=rows, rss_before_mb=rss_before, csv_bytes=path.stat().st_size)
    report.print_table(["phase", "rows", "seconds", "rows_per_s", "peak_rss_mb", "ratio", "target"])
    os.remove(path)
    return report
