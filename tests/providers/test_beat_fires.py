"""`make run` shape: a real Celery worker with embedded beat on the filesystem broker (no
Redis), a short SYNC_INTERVAL_SECONDS, its own SQLite file: the schedule really fires and
syncs the connection against the fake Lunch Flow server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from providers.testing.lunchflow_server import FakeLunchFlow, demo_scenario

ROOT = Path(__file__).resolve().parents[2]
SETUP = """
from finance.services.api_keys import household_user_ensure
from providers.services import connection_create
user = household_user_ensure(email="beat@example.com", family_name="Beat", password="pw-123456789")
connection_create(family=user.family, provider="lunchflow", api_key="demo-key")
"""
COUNT = "from providers.models import Sync; print(Sync.objects.filter(status='completed').count())"


def test_beat_fires_in_the_embedded_worker(tmp_path):
    server = FakeLunchFlow(demo_scenario()).start()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_"))},
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATA_DIR": str(tmp_path),
        "LUNCHFLOW_BASE_URL": server.base_url,
        "SYNC_INTERVAL_SECONDS": "2",
    }

    def manage(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    worker = None
    try:
        manage("migrate", "--noinput", "-v0")
        manage("shell", "-c", SETUP)
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--beat",
                "--loglevel",
                "WARNING",
                "--concurrency",
                "1",
                "--schedule",
                str(tmp_path / "beat-schedule"),
            ],
            cwd=tmp_path,  # the broker folders must not follow the working directory
            env={**env, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        completed = 0
        while time.monotonic() < deadline and completed < 2:
            time.sleep(3)
            completed = int(manage("shell", "-c", COUNT).strip().splitlines()[-1])
        assert completed >= 2, "beat did not fire two scheduled syncs within 90 s"
        # The broker's exchange tables live under DATA_DIR, not in the directory it started in.
        assert sorted(p.name for p in (tmp_path / "broker" / "control").iterdir()) == [
            "celery.exchange",
            "celery.pidbox.exchange",
        ]
        assert not (tmp_path / "control").exists()
    finally:
        if worker is not None:
            os.killpg(worker.pid, signal.SIGTERM)
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
        server.stop()
