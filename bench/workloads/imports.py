"""import: a CSV of 100,000 (quick) or 1,000,000 (full) rows through parse, publish and verify,
then the same file again (all duplicates), against the bare floors of bench/floors.py measured
in the same run: the CSV read by the csv module and its rows COPYed (PostgreSQL) or
executemany'd (SQLite) into a plain table (import); the CSV read, its keys staged and one
anti-join (re-import). Targets (issue 19): import <= 4x, re-import <= 1.5x.

The pipeline half needs the imports app's services. Until they exist on the branch this runs
from, the workload measures the floor and reports the pipeline as skipped. To wire it, provide
`imports.bench_hooks.run_pipeline(*, user, account, csv_path) -> dict[str, float]` returning
the seconds of each phase (`parse`, `publish`, `verify`); this module times nothing else."""

from __future__ import annotations

import csv
import datetime as dt
import importlib
import os
import shutil
import tempfile
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench.common import Report, household_create, peak_rss_mb, vendor
from bench.cpu import CpuSample, cpu_meter

TARGET_IMPORT_RATIO = 4.0
TARGET_REIMPORT_RATIO = 1.5
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


def _floor_rows(hh: Any, path: Path) -> Any:
    """The CSV's rows as the ledger row each becomes, read by the csv module (a generator:
    reading the file counts toward the floor)."""
    from bench.floors import csv_rows, ident

    family, account = ident(hh.family), ident(hh.accounts[0])
    categories = {c.name: ident(c) for c in hh.categories}
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    stamp = now.isoformat() if vendor() == "postgresql" else now.strftime("%Y-%m-%d %H:%M:%S")
    import_id = ident(uuid.uuid4())
    sqlite = vendor() != "postgresql"
    for date, amount, name, category, notes in csv_rows(path):
        if sqlite:  # the column holds canonical text on SQLite (core/exact.py): four places
            amount = f"{Decimal(amount):.4f}"
        yield (
            ident(uuid.uuid4()), family, account, date, amount, "USD", name, notes or None,
            f"{date}\x1f{amount}\x1f{name}", "import", categories.get(category), import_id,
            stamp, stamp,
        )  # fmt: skip


FLOOR_COLUMNS = [
    "id", "family_id", "account_id", "date", "amount", "currency", "name", "notes",
    "external_id", "source", "category_id", "import_id", "created_at", "updated_at",
]  # fmt: skip


def floors(hh: Any, path: Path) -> tuple[dict[str, tuple[float, int]], CpuSample]:
    """The bare floors (bench/floors.py): csv read alone; csv read + COPY / executemany into a
    plain table; csv read + the keys staged + one anti-join against that table (re-import).
    With the CPU the load took."""
    from bench.floors import bare_antijoin, bare_load, csv_read, csv_rows, drop

    out = {"csv": csv_read(path)}
    with cpu_meter() as meter:
        out["load"] = bare_load(FLOOR_COLUMNS, _floor_rows(hh, path), keep=True)
    try:
        keys = ((f"{d}\x1f{a}\x1f{n}",) for d, a, n, _c, _o in csv_rows(path))
        out["antijoin"] = bare_antijoin(keys)
    finally:
        drop()
    return out, meter.sample


def _row(
    report: Report,
    phase: str,
    rows: int,
    secs: float,
    floor: float,
    target: str = "",
    cpu: dict[str, Any] | None = None,
) -> None:
    """A report row; `cpu`: its CPU columns (CpuSample.columns)."""
    report.add(
        phase=phase, rows=rows, seconds=round(secs, 2),
        rows_per_s=round(rows / secs) if secs else "", peak_rss_mb=peak_rss_mb(),
        ratio=round(secs / floor, 2) if floor else "", target=target,
        **(cpu or {}),
    )  # fmt: skip


def _met(ratio: float, target: float) -> str:
    return f"<= {target}x: {'yes' if ratio <= target else 'NO'}"


def run(*, full: bool, backend: str) -> Report:
    rows = int(os.environ.get("BENCH_IMPORT_ROWS") or (1_000_000 if full else 100_000))
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
    f, floor_cpu = floors(floor_hh, path)
    load = "COPY" if backend == "postgresql" else "executemany"
    floor_import, floor_reimport = f["load"][0], f["csv"][0] + f["antijoin"][0]
    _row(report, "floor: csv read alone", rows, f["csv"][0], floor_import)
    _row(
        report, f"FLOOR import: csv + {load} into a plain table", rows, floor_import,
        floor_import, cpu=floor_cpu.columns(),
    )  # fmt: skip
    _row(
        report, "FLOOR re-import: csv read + keys staged + 1 anti-join", rows, floor_reimport,
        floor_reimport,
    )  # fmt: skip
    try:
        hooks = importlib.import_module("imports.bench_hooks")
    except ImportError:
        hooks = None
    if hooks is None or not hasattr(hooks, "run_pipeline"):
        report.add(phase="pipeline", rows=rows, target="skipped: no imports.bench_hooks")
    else:
        hh = household_create("import")
        from finance.models import User

        user = User.objects.filter(family=hh.family).first()
        with cpu_meter() as meter:
            phases = hooks.run_pipeline(user=user, account=hh.accounts[0], csv_path=path)
        total = phases["parse"] + phases["publish"]
        _row(
            report, "import: upload to verified (parse + publish)", rows, total, floor_import,
            _met(total / floor_import, TARGET_IMPORT_RATIO), cpu=meter.sample.columns(floor_import),
        )  # fmt: skip
        for phase, secs in phases.items():
            _row(report, f"  {phase.strip()}", rows, secs, floor_import)
        with cpu_meter() as meter:
            again = hooks.run_pipeline(
                user=user, account=hh.accounts[0], csv_path=path, expect_created=0
            )
        total = again["parse"] + again["publish"]
        _row(
            report, "re-import (all duplicates): upload to verified", rows, total,
            floor_reimport, _met(total / floor_reimport, TARGET_REIMPORT_RATIO),
            cpu=meter.sample.columns(floor_reimport),
        )  # fmt: skip
        for phase, secs in again.items():
            _row(report, f"  {phase.strip()}", rows, secs, floor_reimport)
        peak = peak_rss_mb()
        report.extra["peak_rss_target"] = (
            f"< {TARGET_PEAK_MB} MB at 1M rows: "
            f"{'yes' if peak < TARGET_PEAK_MB else 'NO'} ({peak} MB)"
        )
        print(report.extra["peak_rss_target"])
    report.extra.update(rows=rows, rss_before_mb=rss_before, csv_bytes=path.stat().st_size)
    report.print_table(
        [
            "phase", "rows", "seconds", "rows_per_s", "peak_rss_mb", "ratio", "our_cpu_s",
            "db_cpu_s", "cpu_bound_x", "target",
        ]
    )  # fmt: skip
    shutil.rmtree(tmp, ignore_errors=True)
    return report
