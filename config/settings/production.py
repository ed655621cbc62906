"""Production settings: HTTPS everywhere, a required SECRET_KEY. `manage.py check --deploy`
is clean with these (pinned by a test)."""

from __future__ import annotations

import os

os.environ.setdefault("REQUIRE_SECRET_KEY", "true")

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.base import DEBUG, SECRET_KEY, env_bool, env_int

if DEBUG:
    raise ImproperlyConfigured("DEBUG must be off in production")
if SECRET_KEY.startswith("dev-insecure-") or len(SECRET_KEY) < 50:
    raise ImproperlyConfigured("SECRET_KEY must be set to a random value of at least 50 characters")

SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0, maximum=63072000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SILENCED_SYSTEM_CHECKS = ["security.W021"] if not SECURE_HSTS_PRELOAD else []
