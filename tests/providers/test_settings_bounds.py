"""Numeric settings are checked at start: a value that is not a number, or out of its range,
stops the service with a message naming the setting (before any sync can trip on it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_float, env_int, env_positive_int

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("SIMPLEFIN_DAILY_REQUEST_LIMIT", "12333", "at most 1000"),
        ("PROVIDER_HTTP_TIMEOUT", "soon", "not a number"),
        ("SYNC_SCHEDULE_HOUR", "24", "between 0 and 23"),
    ],
)
def test_the_service_refuses_to_start_naming_the_setting(tmp_path, name, value, words):
    env = {**os.environ, "DATA_DIR": str(tmp_path), name: value}
    env.pop("DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert name in result.stderr and words in result.stderr


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("abc", "X_TEST='abc' is not an integer"),
        ("1.5", "X_TEST='1.5' is not an integer"),
        ("-1", "X_TEST must be between 0 and 10, got -1"),
        ("11", "X_TEST must be between 0 and 10, got 11"),
    ],
)
def test_env_int_bounds(monkeypatch, raw, message):
    monkeypatch.setenv("X_TEST", raw)
    with pytest.raises(ImproperlyConfigured) as exc:
        env_int("X_TEST", 3, minimum=0, maximum=10)
    assert str(exc.value) == message


@pytest.mark.parametrize("raw", ["nan", "inf", "-0.5", "301", "soon"])
def test_env_float_bounds(monkeypatch, raw):
    monkeypatch.setenv("X_TEST", raw)
    with pytest.raises(ImproperlyConfigured, match="X_TEST"):
        env_float("X_TEST", 30.0, minimum=0.1, maximum=300)


def test_defaults_and_good_values(monkeypatch):
    monkeypatch.delenv("X_TEST", raising=False)
    assert env_int("X_TEST", 3, minimum=0, maximum=10) == 3
    assert env_float("X_TEST", 2.5, minimum=0, maximum=10) == 2.5
    monkeypatch.setenv("X_TEST", " 7 ")
    assert env_int("X_TEST", 3, minimum=0, maximum=10) == 7
    assert env_float("X_TEST", 2.5, minimum=0, maximum=10) == 7.0
    assert env_positive_int("X_TEST", 3, maximum=7) == 7
    monkeypatch.setenv("X_TEST", "8")
    with pytest.raises(ImproperlyConfigured, match="X_TEST must be at most 7, got 8"):
        env_positive_int("X_TEST", 3, maximum=7)
