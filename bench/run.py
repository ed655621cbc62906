"""`make bench` (quick) and `make bench FULL=1` (million-row sizes).

For each backend (SQLite in a temp dir; PostgreSQL when 127.0.0.1:5432 answers, in a bench
database this script creates and drops) it migrates a fresh database, then runs every workload
of bench/workloads in its own process (so peak memory is per workload). Each workload prints
a table and writes bench/results/<workload>-<backend>.json.

    python bench/run.py [--full] [--only list,create] [--backends sqlite,postgresql]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

from bench.workloads import WORKLOADS, workload  # noqa: E402

PG_HOST, PG_PORT = "127.0.0.1", 5432
PG_ADMIN_URL = os.environ.get("BENCH_PG_ADMIN_URL", f"postgres://postgres@{PG_HOST}:{PG_PORT}")


def postgres_answers() -> bool:
    try:
        socket.create_connection((PG_HOST, PG_PORT), 2).close()
        return True
    except OSError:
        return False


def backends_reachable(spec: str) -> list[str]:
    """The backends of a comma-separated list this machine can run (PostgreSQL: if it answers)."""
    backends = []
    for backend in spec.split(","):
        if backend == "postgresql" and not postgres_answers():
            print(f"PostgreSQL is not reachable on {PG_HOST}:{PG_PORT}: skipping it")
            continue
        backends.append(backend)
    return backends


def base_env(data_dir: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "SQLITE_PATH", "CACHE_URL", "CELERY_BROKER_URL")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.base",
        DATA_DIR=data_dir,
        DEBUG="false",
        LOG_LEVEL="WARNING",
        API_RATE_LIMIT="1000000000",
        CELERY_TASK_ALWAYS_EAGER="true",
        PYTHONPATH=str(BASE_DIR),
    )
    return env


@contextmanager
def backend_env(backend: str) -> Iterator[dict[str, str]]:
    tmp = tempfile.mkdtemp(prefix=f"bench-{backend}-")
    env = base_env(tmp)
    db_name = f"bench_pf_{os.getpid()}"
    try:
        if backend == "sqlite":
            env["SQLITE_PATH"] = str(Path(tmp) / "bench.sqlite3")
        else:
            import psycopg

            with psycopg.connect(f"{PG_ADMIN_URL}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{db_name}"')
                conn.execute(f'CREATE DATABASE "{db_name}"')
            env["DATABASE_URL"] = f"{PG_ADMIN_URL}/{db_name}"
        yield env
    finally:
        if backend == "postgresql":
            import psycopg

            with psycopg.connect(f"{PG_ADMIN_URL}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        shutil.rmtree(tmp, ignore_errors=True)


def child(name: str, backend: str, full: bool) -> None:
    """Run one workload in this process (called by the parent through a subprocess)."""
    from bench.common import django_setup

    django_setup()
    profiler = cProfile.Profile() if os.environ.get("BENCH_PROFILE") else None
    with profiler or nullcontext():
        report = workload(name)(full=full, backend=backend)
    if profiler is not None:
        profile_path = BASE_DIR / "bench" / "results" / f"{name}-{backend}.prof"
        profile_path.parent.mkdir(exist_ok=True)
        profiler.dump_stats(profile_path)
        print(f"-> {profile_path.relative_to(BASE_DIR)} (cProfile)", flush=True)
    path = report.write()
    print(f"-> {path.relative_to(BASE_DIR)}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--full", action="store_true", help="million-row sizes")
    parser.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--backend", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.backend, args.full)
        return 0

    names = [n for n in args.only.split(",") if n]
    unknown = set(names) - set(WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads {sorted(unknown)}; known: {sorted(WORKLOADS)}")
    backends = backends_reachable(args.backends)
    started = time.perf_counter()
    failures = []
    for backend in backends:
        with backend_env(backend) as env:
            for command in (["migrate"], ["collectstatic"]):  # as `make run` does
                subprocess.run(
                    [sys.executable, "manage.py", *command, "--noinput", "-v0"],
                    cwd=BASE_DIR,
                    env=env,
                    check=True,
                )
            for name in names:
                cmd = [sys.executable, "bench/run.py", "--child", name, "--backend", backend]
                if args.full:
                    cmd.append("--full")
                t0 = time.perf_counter()
                done = subprocess.run(cmd, cwd=BASE_DIR, env=env)
                print(f"({name} on {backend}: {time.perf_counter() - t0:.0f}s)", flush=True)
                if done.returncode:
                    failures.append(f"{name} on {backend}")
    summary = {"backends": backends, "workloads": names, "full": args.full}
    summary["seconds"] = round(time.perf_counter() - started)
    summary["failures"] = failures
    (BASE_DIR / "bench" / "results").mkdir(exist_ok=True)
    (BASE_DIR / "bench" / "results" / "run.json").write_text(json.dumps(summary, indent=2))
    print(f"\nbench finished in {summary['seconds']}s; failures: {failures or 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
