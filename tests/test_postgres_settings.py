"""PostgreSQL connections are opened without the JIT (config/settings/base.py): a short
statement whose estimate ran high (statistics lagging behind a grown table) was compiled for
longer than it ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

BASE_DIR = Path(__file__).resolve().parent.parent


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's own setting")
def test_the_jit_is_off_for_our_connections():
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('jit')")
        assert cursor.fetchone()[0] == "off"


def _options_for(tmp_path, **env_extra: str) -> str:
    """DATABASES' connection options as the settings read them from this environment (a fresh
    interpreter: settings are read once a process)."""
    code = (
        "import django.conf as c; "
        "print(c.settings.DATABASES['default'].get('OPTIONS', {}).get('options', ''))"
    )
    env = {
        **{k: v for k, v in os.environ.items() if k != "POSTGRES_JIT"},
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATA_DIR": str(tmp_path),
        **env_extra,
    }
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("url", "jit", "options"),
    [
        ("postgres://u@127.0.0.1:5432/db", None, "-c jit=off"),
        ("postgres://u@127.0.0.1:5432/db", "true", ""),
        ("postgres://u@127.0.0.1:5432/db", "false", "-c jit=off"),
        # a jit the operator gave in the URL's own options stands, whatever POSTGRES_JIT says
        ("postgres://u@127.0.0.1:5432/db?options=-c%20jit%3Don", None, "-c jit=on"),
        (
            "postgres://u@127.0.0.1:5432/db?options=-c%20work_mem%3D64MB",
            None,
            "-c work_mem=64MB -c jit=off",
        ),
    ],
)
def test_postgres_jit_setting(tmp_path, url, jit, options):
    """POSTGRES_JIT=true keeps the server's own JIT setting (README, settings table)."""
    extra = {"DATABASE_URL": url, **({"POSTGRES_JIT": jit} if jit is not None else {})}
    assert _options_for(tmp_path, **extra) == options
