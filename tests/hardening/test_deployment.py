from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATA_DIR": str(tmp_path),
    }
    env.pop("DATABASE_URL", None)
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set by the browser tests' session
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_a_missing_secret_key(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DATA_DIR": str(tmp_path),
    }
    env.pop("SECRET_KEY", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


@pytest.mark.django_db
def test_admin_logins_are_throttled_after_repeated_failures(alice):
    cache.clear()
    browser = Client()
    for _ in range(5):
        r = browser.post("/admin/login/", {"username": alice.user.email, "password": "wrong"})
        assert r.status_code == 200
    r = browser.post("/admin/login/", {"username": alice.user.email, "password": "pw-12345-secret"})
    assert r.status_code == 429
    assert b"Too many failed sign-in attempts" in r.content
    cache.clear()
    r = browser.post("/admin/login/", {"username": alice.user.email, "password": "pw-12345-secret"})
    assert r.status_code == 302
