"""Settings for the test suite: fast hashing, eager Celery, a throwaway SQLite file."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from config.settings.base import *  # noqa: F403
from config.settings.base import CACHES

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


# The shared file cache, in a directory of this test process's own: parallel test processes
# (and earlier runs) must not see each other's rate-limit and login-failure counters.
if CACHES["default"]["BACKEND"] == "config.cache.SharedFileCache":
    CACHES["default"]["LOCATION"] = tempfile.mkdtemp(prefix="pf-test-cache-")
    atexit.register(shutil.rmtree, CACHES["default"]["LOCATION"], ignore_errors=True)

# Export archives and restore uploads in a directory of this test process's own.
_EXPORT_ROOT = tempfile.mkdtemp(prefix="pf-test-exports-")
atexit.register(shutil.rmtree, _EXPORT_ROOT, ignore_errors=True)
EXPORTS_DIR = Path(_EXPORT_ROOT) / "exports"
RESTORES_DIR = Path(_EXPORT_ROOT) / "restores"
