"""`make bench PEER=actual`: our CSV import beside a peer's on the very same file (issue 19 item 4).

Not part of `make bench` or CI. Writes one CSV with the import workload's `csv_write`
(`BENCH_PEER_ROWS` rows, default 50,000), then:

- ours: on each backend (SQLite in a temp dir; PostgreSQL when 127.0.0.1:5432 answers, a bench
  database created and dropped; bench/run.py's `backend_env`), a fresh migrated database and a
  child process that imports the file through `imports.bench_hooks.run_pipeline` (parse +
  publish, as the import workload times it), then imports it again (all duplicates, no ledger
  row written);
- Actual Budget: `@actual-app/api` (the version bench/peer/package.json pins) installed from the
  npm registry into a temp folder (removed afterwards; `BENCH_PEER_NPM_DIR` keeps an install
  there and reuses it), and bench/peer/actual_import.mjs, which creates a local budget with no
  server and calls `importTransactions` on the file, then again (see that script for the
  transaction shape: no imported_id, as a CSV has none).

Prints a table of seconds and ratios (Actual's seconds / ours) against the targets at 50,000
rows (import >= 50x, re-import >= 500x; printed, never asserted) and writes
bench/results/peer-actual.json.

    python bench/peer.py [--peer actual] [--rows 50000] [--backends sqlite,postgresql]
                         [--import-only]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

from bench.run import backend_env, backends_reachable  # noqa: E402

PEER_DIR = BASE_DIR / "bench" / "peer"
RESULTS = BASE_DIR / "bench" / "results" / "peer-actual.json"
TARGETS = {"import": 50.0, "reimport": 500.0}
PHASES = {"import": "import", "reimport": "re-import (all duplicates)"}


# --- ours (child process, one backend) ---------------------------------------------------------


def ours_child(csv_path: Path, out: Path, backend: str) -> None:
    from bench.common import django_setup, household_create, peak_rss_mb

    django_setup()
    from finance.models import Transaction, User
    from imports import bench_hooks

    rows = sum(1 for _ in csv_path.open()) - 1
    hh = household_create("peer", accounts=1)
    user = User.objects.filter(family=hh.family).first()
    account = hh.accounts[0]
    result: dict[str, Any] = {"backend": backend}
    for phase, expect in (("import", rows), ("reimport", 0)):
        phases = bench_hooks.run_pipeline(
            user=user, account=account, csv_path=csv_path, expect_created=expect
        )
        result[phase] = {
            "seconds": phases["parse"] + phases["publish"],
            "phases": {k.strip(): round(v, 3) for k, v in phases.items()},
            "ledger_rows": Transaction.objects.filter(account=account).count(),
        }
    result["peak_rss_mb"] = peak_rss_mb()
    out.write_text(json.dumps(result))


def run_ours(backend: str, csv_path: Path, tmp: Path) -> dict[str, Any]:
    out = tmp / f"ours-{backend}.json"
    with backend_env(backend) as env:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
            cwd=BASE_DIR, env=env, check=True,
        )  # fmt: skip
        cmd = [sys.executable, "bench/peer.py", "--ours-child", str(csv_path), "--out", str(out)]
        subprocess.run([*cmd, "--backend", backend], cwd=BASE_DIR, env=env, check=True)
    return json.loads(out.read_text())


# --- Actual Budget -----------------------------------------------------------------------------


def npm_install(target: Path) -> float:
    """@actual-app/api into `target` from the npm registry (no lock file written); seconds."""
    spec = (PEER_DIR / "package.json").read_text()
    marker = target / "node_modules" / ".bench-peer-package.json"
    if marker.exists() and marker.read_text() == spec:
        return 0.0
    target.mkdir(parents=True, exist_ok=True)
    (target / "package.json").write_text(spec)
    started = time.perf_counter()
    subprocess.run(
        ["npm", "install", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=target, check=True,
    )  # fmt: skip
    marker.write_text(spec)
    return time.perf_counter() - started


def run_actual(csv_path: Path, tmp: Path, *, import_only: bool = False) -> dict[str, Any]:
    kept = os.environ.get("BENCH_PEER_NPM_DIR")
    install = Path(kept).expanduser() if kept else tmp / "actual"
    print(f"installing @actual-app/api into {install} ...", flush=True)
    installed = npm_install(install)
    print(f"  ({'already there' if not installed else f'{installed:.0f}s'})", flush=True)
    script = install / "actual_import.mjs"
    shutil.copyfile(PEER_DIR / "actual_import.mjs", script)
    data_dir = tmp / "actual-data"
    data_dir.mkdir()
    out = tmp / "actual.json"
    log = tmp / "actual.log"
    what = "import only" if import_only else "import, then re-import"
    print(f"running Actual's importTransactions ({what}) ...", flush=True)
    with log.open("w") as fh:
        done = subprocess.run(
            ["node", str(script), "--csv", str(csv_path), "--data-dir", str(data_dir),
             "--out", str(out), *(["--import-only"] if import_only else [])],
            cwd=install, stdout=fh, stderr=subprocess.STDOUT,
        )  # fmt: skip
    if done.returncode:
        print(log.read_text()[-4000:])
        partial = f": {out.read_text()}" if out.exists() else ""
        raise RuntimeError(f"actual_import.mjs exited {done.returncode}{partial}")
    result = json.loads(out.read_text())
    result["npm_install_s"] = round(installed, 1)
    return result


# --- comparison --------------------------------------------------------------------------------


def compare(rows: int, actual: dict[str, Any], ours: dict[str, dict[str, Any]]) -> list[dict]:
    table = []
    for phase, label in PHASES.items():
        if phase not in actual:
            continue  # --import-only
        peer_s = actual[phase]["seconds"]
        for backend, result in ours.items():
            our_s = result[phase]["seconds"]
            ratio = peer_s / our_s
            target = TARGETS[phase]
            met = "yes" if ratio >= target else "NO"
            table.append(
                {
                    "phase": label, "rows": rows, "actual_s": round(peer_s, 2),
                    "backend": backend, "ours_s": round(our_s, 2), "ratio": round(ratio, 1),
                    "target": f">= {target:g}x at 50,000 rows: {met}",
                }
            )  # fmt: skip
    return table


def checks(rows: int, actual: dict[str, Any], ours: dict[str, dict[str, Any]]) -> list[str]:
    """Both sides must have written every row once and nothing on the re-import."""
    out = []
    a_imp, a_re = actual["import"], actual.get("reimport")
    if (a_imp["added"], a_imp["ledger_rows"]) != (rows, rows):
        out.append(f"Actual import added {a_imp['added']}, holds {a_imp['ledger_rows']}")
    if a_re is not None and (a_re["added"], a_re["ledger_rows"]) != (0, rows):
        out.append(f"Actual re-import added {a_re['added']}, holds {a_re['ledger_rows']}")
    for backend, result in ours.items():
        held = (result["import"]["ledger_rows"], result["reimport"]["ledger_rows"])
        if held != (rows, rows):
            out.append(f"ours on {backend} holds {held} rows after import / re-import")
    return out


def print_table(table: list[dict]) -> None:
    columns = ["phase", "rows", "actual_s", "backend", "ours_s", "ratio", "target"]
    cells = [[str(r[c]) for c in columns] for r in table]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    for r in cells:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--peer", default="actual", choices=["actual"])
    parser.add_argument("--rows", type=int, default=int(os.environ.get("BENCH_PEER_ROWS", 50_000)))
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument(
        "--import-only",
        action="store_true",
        help="Actual's import alone (its re-import of 50,000 rows takes more than an hour)",
    )
    parser.add_argument("--ours-child", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--backend", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ours_child:
        ours_child(Path(args.ours_child), Path(args.out), args.backend)
        return 0
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        print(f"{' and '.join(missing)} not found: the peer bench needs Node.js and npm")
        return 2
    backends = backends_reachable(args.backends)

    from bench.workloads.imports import csv_write

    tmp = Path(tempfile.mkdtemp(prefix="bench-peer-"))
    try:
        csv_path = tmp / "rows.csv"
        csv_write(csv_path, args.rows)
        print(f"wrote {args.rows:,} CSV rows ({csv_path.stat().st_size / 1e6:.1f} MB)", flush=True)
        load_before = os.getloadavg()
        ours = {}
        for backend in backends:
            t0 = time.perf_counter()
            ours[backend] = run_ours(backend, csv_path, tmp)
            print(f"(ours on {backend}: {time.perf_counter() - t0:.0f}s)", flush=True)
        t0 = time.perf_counter()
        actual = run_actual(csv_path, tmp, import_only=args.import_only)
        print(f"(Actual: {time.perf_counter() - t0:.0f}s)", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    table = compare(args.rows, actual, ours)
    problems = checks(args.rows, actual, ours)
    print(f"\n== {args.rows:,}-row CSV: Actual Budget {actual['api_version']} beside ours ==")
    print_table(table)
    if args.rows != 50_000:
        print("(the targets are set at 50,000 rows; this run used another size)")
    for problem in problems:
        print(f"CHECK FAILED: {problem}")
    RESULTS.parent.mkdir(exist_ok=True)
    body = {
        "peer": args.peer,
        "rows": args.rows,
        "measured_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "comparison": table,
        "checks_failed": problems,
        "actual": actual,
        "ours": ours,
    }
    RESULTS.write_text(json.dumps(body, indent=2))
    print(f"-> {RESULTS.relative_to(BASE_DIR)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
