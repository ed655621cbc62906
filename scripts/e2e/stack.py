"""The production shape of compose.yaml as local processes, for scripts/e2e/run.py: a fresh
PostgreSQL database (created here, dropped at the end), a Redis database the run owns (flushed
before and after), gunicorn with 2 workers, two Celery workers, one beat, and the fake Lunch
Flow server. Every process runs in its own session, so SIGKILL of its process group takes the
pool children with it, as a killed container would."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

BASE_DIR = Path(__file__).resolve().parents[2]
PG_ADMIN_URL = os.environ.get("E2E_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432")
REDIS_URL = os.environ.get("E2E_REDIS_URL", "redis://127.0.0.1:6379/15")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unreachable() -> str | None:
    """Why the run cannot happen here (None: PostgreSQL and Redis both answer)."""
    pg = urlsplit(PG_ADMIN_URL)
    try:
        socket.create_connection((pg.hostname or "127.0.0.1", pg.port or 5432), 2).close()
    except OSError:
        return f"PostgreSQL is not reachable at {pg.hostname}:{pg.port or 5432}"
    try:
        import redis

        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except Exception as exc:
        return f"Redis is not reachable at {REDIS_URL} ({exc.__class__.__name__})"
    return None


class Stack:
    def __init__(self, *, sync_interval: int = 15, visibility_timeout: int = 10) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="e2e-"))
        self.db_name = f"e2e_pf_{os.getpid()}"
        self.web_port, self.fake_port = free_port(), free_port()
        self.web_url = f"http://127.0.0.1:{self.web_port}"
        self.fake_url = f"http://127.0.0.1:{self.fake_port}"
        self.procs: dict[str, subprocess.Popen] = {}
        self.offsets: dict[str, int] = {}
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("DATABASE_URL", "CELERY_", "CACHE_URL", "SQLITE_PATH"))
        }
        self.env.update(
            DJANGO_SETTINGS_MODULE="config.settings.production",
            SECRET_KEY=secrets.token_urlsafe(48),
            REQUIRE_SECRET_KEY="true",
            SECURE_SSL_REDIRECT="false",  # plain HTTP on 127.0.0.1; a proxy does TLS in compose
            ALLOWED_HOSTS="127.0.0.1,localhost",
            DATABASE_URL=f"{PG_ADMIN_URL}/{self.db_name}",
            CELERY_BROKER_URL=REDIS_URL,
            CACHE_URL=REDIS_URL,
            DATA_DIR=str(self.tmp / "data"),
            LUNCHFLOW_BASE_URL=f"{self.fake_url}/api/v1",
            LUNCHFLOW_INCLUDE_PENDING="false",
            PROVIDER_ALLOW_PRIVATE_URLS="true",
            SYNC_INTERVAL_SECONDS=str(sync_interval),
            # a killed worker's unacknowledged task comes back within seconds, not 15 minutes
            CELERY_VISIBILITY_TIMEOUT=str(visibility_timeout),
            CELERY_RESTORE_INTERVAL="1",
            API_RATE_LIMIT="1000000",
            LOG_LEVEL="INFO",
            PYTHONUNBUFFERED="1",
            PYTHONPATH=str(BASE_DIR),
        )

    # --- database and Redis ------------------------------------------------------------------

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(f"{PG_ADMIN_URL}/postgres", autocommit=True) as conn:
            conn.execute(sql)

    def _redis_flush(self) -> None:
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()

    def sql(self, query: str, params: tuple = ()) -> list[tuple]:
        import psycopg

        with psycopg.connect(self.env["DATABASE_URL"], autocommit=True) as conn:
            return conn.execute(query, params).fetchall()

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=BASE_DIR,
            env=self.env,
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)}: {done.stderr[-2000:]}")
        return done.stdout

    def setup(self) -> str:
        """The database migrated, Redis empty; returns a read-write API key."""
        self._admin(f'DROP DATABASE IF EXISTS "{self.db_name}"')
        self._admin(f'CREATE DATABASE "{self.db_name}"')
        self._redis_flush()
        self.manage("migrate", "--noinput", "-v0")
        return self.manage("createapikey", "--email", "e2e@example.com").strip()

    # --- processes -----------------------------------------------------------------------------

    COMMANDS: dict[str, list[str]] = {
        "fake": ["scripts/e2e/fake.py", "--port", "{fake_port}"],
        "web": [
            "-m", "gunicorn", "--config", "python:config.gunicorn", "config.wsgi:application",
            "--bind", "127.0.0.1:{web_port}", "--workers", "2", "--timeout", "120",
        ],
        "worker1": ["-m", "celery", "-A", "config", "worker", "-n", "w1@%h", "--loglevel",
                    "INFO", "--concurrency", "2"],
        "worker2": ["-m", "celery", "-A", "config", "worker", "-n", "w2@%h", "--loglevel",
                    "INFO", "--concurrency", "2"],
        "beat": ["-m", "celery", "-A", "config", "beat", "--loglevel", "INFO", "--schedule",
                 "{data_dir}/celerybeat-schedule"],
    }  # fmt: skip

    def log(self, name: str) -> Path:
        return self.tmp / f"{name}.log"

    def start(self, name: str) -> subprocess.Popen:
        values = {"fake_port": self.fake_port, "web_port": self.web_port}
        values["data_dir"] = self.env["DATA_DIR"]
        cmd = [sys.executable, *(part.format(**values) for part in self.COMMANDS[name])]
        log = self.log(name)
        self.offsets[name] = log.stat().st_size if log.exists() else 0  # a restart appends
        with log.open("a") as out:
            proc = subprocess.Popen(
                cmd, cwd=BASE_DIR, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.procs[name] = proc
        return proc

    def wait_ready(self, name: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        marks = {"worker1": "ready.", "worker2": "ready.", "beat": "beat: Starting"}
        while time.monotonic() < deadline:
            if self.procs[name].poll() is not None:
                raise RuntimeError(f"{name} exited: {self.tail(name)}")
            if name in marks:
                with self.log(name).open(errors="replace") as log:
                    log.seek(self.offsets[name])
                    if marks[name] in log.read():
                        return
            else:
                url = f"{self.web_url}/healthz" if name == "web" else f"{self.fake_url}/__e2e/stats"
                try:
                    if requests.get(url, timeout=2).status_code == 200:
                        return
                except requests.RequestException:
                    pass
            time.sleep(0.2)
        raise RuntimeError(f"{name} not ready in {timeout:.0f}s: {self.tail(name)}")

    def tail(self, name: str, chars: int = 2000) -> str:
        return self.log(name).read_text(errors="replace")[-chars:]

    def kill(self, name: str) -> int:
        """SIGKILL the process and every child it forked (its session's process group)."""
        proc = self.procs[name]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        return proc.pid

    def stop(self, name: str, timeout: float = 20) -> None:
        proc = self.procs.get(name)
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def teardown(self, keep: bool = False) -> None:
        for name in ("beat", "worker1", "worker2", "web", "fake"):
            with contextlib.suppress(ProcessLookupError):
                self.stop(name)
        try:
            self._admin(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
            self._redis_flush()
        except Exception as exc:
            print(f"teardown: {exc}")
        if not keep:
            import shutil

            shutil.rmtree(self.tmp, ignore_errors=True)

    def fake(self, path: str, **params: Any) -> dict:
        return requests.get(f"{self.fake_url}/__e2e/{path}", params=params, timeout=10).json()
