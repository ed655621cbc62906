"""Environment access: one `env` object, loud on bad values.

Every setting the service reads is listed in `.env.example`.
"""

from __future__ import annotations

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

_env_file = BASE_DIR / ".env"
if _env_file.exists():
    environ.Env.read_env(str(_env_file))


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    value = env.str(name, default=default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of {', '.join(choices)}")
    return value


def env_positive_int(name: str, default: int, *, maximum: int | None = None) -> int:
    try:
        value = env.int(name, default=default)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer: {exc}") from exc
    if value <= 0:
        raise ImproperlyConfigured(f"{name} must be a positive integer, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {value}")
    return value


def env_int(name: str, default: int, *, minimum: int, maximum: int) -> int:
    """An integer setting within [minimum, maximum], or ImproperlyConfigured naming it."""
    raw = env.str(name, default="").strip()
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if not minimum <= value <= maximum:
        raise ImproperlyConfigured(f"{name} must be between {minimum} and {maximum}, got {value}")
    return value


def env_float(name: str, default: float, *, minimum: float, maximum: float) -> float:
    """A number of seconds (or any decimal setting) within [minimum, maximum]."""
    raw = env.str(name, default="").strip()
    if raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if not minimum <= value <= maximum:  # also refuses nan and inf
        raise ImproperlyConfigured(f"{name} must be between {minimum:g} and {maximum:g}, got {raw}")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = env.str(name, default="")
    if raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true or false)")
