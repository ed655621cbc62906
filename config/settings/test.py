"""Settings for the test suite: fast hashing, eager Celery, a throwaway SQLite file."""

from __future__ import annotations

from config.settings.base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
CELERY_BROKER_URL = "memory://"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
API_RATE_LIMIT = 100_000
# The fake provider servers listen on 127.0.0.1; tests of the refusal turn this off.
PROVIDER_ALLOW_PRIVATE_URLS = True
WHITENOISE_AUTOREFRESH = True
# Never the real European Central Bank from a test: tests start a fake one (port 9: discard).
FX_BASE_URL = "http://127.0.0.1:9/stats/eurofxref"
