"""The WSGI entry point gunicorn loads (make run, compose.yaml)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def test_the_wsgi_app_loads_its_views_up_front_and_freezes_them(tmp_path):
    """A worker's long-lived objects (modules, views, serializers, the admin) are loaded before
    the first request and moved out of the garbage collector's reach, so its oldest-generation
    collections walk what requests leave, not ~110,000 startup objects."""
    code = (
        "import gc, sys, config.wsgi; "
        "print(gc.get_freeze_count(), len(gc.get_objects()), "
        "'finance.views.transactions' in sys.modules, 'trades.views' in sys.modules)"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATA_DIR": str(tmp_path),
        "SQLITE_PATH": str(tmp_path / "db.sqlite3"),
    }
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    frozen, tracked, finance_views, trades_views = done.stdout.split()
    assert (finance_views, trades_views) == ("True", "True")
    assert int(frozen) > 50_000
    assert int(tracked) < int(frozen) // 20
