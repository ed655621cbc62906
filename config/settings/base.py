"""Settings for every environment, read from the environment (see `.env.example`)."""

from __future__ import annotations

import zoneinfo
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import (
    BASE_DIR,
    env,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_positive_int,
)

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG and env_bool("REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("SECRET_KEY must be set")
    # Development default: stable per checkout so sessions and encrypted fields survive restarts.
    SECRET_KEY = "dev-insecure-" + str(BASE_DIR)

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# Key for encrypting provider credentials at rest; derived from SECRET_KEY when unset.
FIELD_ENCRYPTION_KEY = env.str("FIELD_ENCRYPTION_KEY", default="")

INSTALLED_APPS = [
    "config.admin.FinanceAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "finance",
    "trades",
    "imports",
    "providers",
    "exports",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "finance.api.middleware.ApiErrorMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database: SQLite file under the project unless DATABASE_URL is set -----------------------
DATA_DIR = Path(env.str("DATA_DIR", default=str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)
if "DATABASE_URL" in env:
    try:
        DATABASES = {"default": env.db("DATABASE_URL")}
    except Exception as exc:  # django-environ raises several types for a bad URL
        raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from exc
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env.str("SQLITE_PATH", default=str(DATA_DIR / "db.sqlite3")),
        }
    }
_db = DATABASES["default"]
if _db["ENGINE"] == "django.db.backends.sqlite3":
    _db.setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": (
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000;"
                # 32 MB of page cache (default 2 MB): index inserts of a large ledger (the
                # list indexes, the search queue) stop thrashing it.
                " PRAGMA cache_size=-32768;"
                # A checkpoint (the WAL's pages copied into the database file, then synced)
                # every 10,000 pages (40 MB) instead of 1,000: the pages a write touches again
                # and again (index roots, a balance series) are copied once per checkpoint,
                # and a bulk create no longer pays one every few requests (mean 144-161 ->
                # 138-140 ms, bench/README.md). The file is cut back to 64 MB after one.
                " PRAGMA wal_autocheckpoint=10000; PRAGMA journal_size_limit=67108864;"
            ),
        }
    )
elif _db["ENGINE"] in ("django.db.backends.postgresql", "django.db.backends.postgresql_psycopg2"):
    _db["ENGINE"] = "django.db.backends.postgresql"
    _db.setdefault("CONN_MAX_AGE", env_int("CONN_MAX_AGE", 60, minimum=0, maximum=86400))
    _db.setdefault("CONN_HEALTH_CHECKS", True)
    # PostgreSQL's JIT off for our connections (POSTGRES_JIT=true leaves the server's own
    # setting): it compiles a statement whose estimated cost passes a threshold, and our
    # statements are short ones whose estimates run high when the statistics lag behind a
    # grown table (a bulk's 1,000 transfer-candidate probes: 2 ms to run, 100-180 ms to
    # compile; docs/decisions.md, "Each side's CPU in the bench, the JIT off"). A `jit`
    # given in DATABASE_URL's own options stands.
    _options = _db.setdefault("OPTIONS", {})
    if not env_bool("POSTGRES_JIT", False) and "jit" not in _options.get("options", ""):
        _options["options"] = f"{_options.get('options', '')} -c jit=off".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "finance.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
FORMAT_MODULE_PATH = ["config.formats"]  # one date format on every screen
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
try:
    zoneinfo.ZoneInfo(TIME_ZONE)
except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
    raise ImproperlyConfigured(f"TIME_ZONE={TIME_ZONE!r} is not a known time zone") from exc
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(DATA_DIR / "media")))

# --- Cache: the rate limit's and the login lockout's counters, shared by every process ------
# Files under DATA_DIR by default (config/cache.py says why not the database); Redis (or any
# Django cache URL) when CACHE_URL is set.
if "CACHE_URL" in env:
    CACHES = {"default": env.cache("CACHE_URL")}
else:
    CACHES = {
        "default": {
            "BACKEND": "config.cache.SharedFileCache",
            "LOCATION": str(DATA_DIR / "cache"),
            "OPTIONS": {"MAX_ENTRIES": 10_000},
        }
    }

# --- Request size limits ------------------------------------------------------------------------
API_MAX_BODY_BYTES = env_positive_int("API_MAX_BODY_BYTES", 10 * 1024 * 1024)
IMPORT_MAX_UPLOAD_BYTES = env_positive_int("IMPORT_MAX_UPLOAD_BYTES", 100 * 1024 * 1024)
# An import in importing/reverting with no heartbeat for this long is settled by the beat task.
IMPORT_STUCK_AFTER_SECONDS = env_positive_int("IMPORT_STUCK_AFTER_SECONDS", 1800)
# Uploads larger than this are parsed by a worker (the upload answers 202 at once).
IMPORT_SYNC_PARSE_BYTES = env_positive_int("IMPORT_SYNC_PARSE_BYTES", 2 * 1024 * 1024)
# A restore's archive (POST /api/v1/restores): a whole household, so larger than an import.
RESTORE_MAX_UPLOAD_BYTES = env_positive_int("RESTORE_MAX_UPLOAD_BYTES", 2 * 1024 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = max(API_MAX_BODY_BYTES, IMPORT_MAX_UPLOAD_BYTES)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

# --- Django REST framework ---------------------------------------------------------------------
API_RATE_LIMIT = env_positive_int("API_RATE_LIMIT", 1000)  # requests per key per window
API_RATE_LIMIT_WINDOW = env_positive_int("API_RATE_LIMIT_WINDOW", 60)  # seconds

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["finance.api.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["finance.api.permissions.HasApiKeyScope"],
    "DEFAULT_THROTTLE_CLASSES": ["finance.api.throttling.ApiKeyRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["finance.api.renderers.JSONRenderer"],
    # JSON only; the import upload adds multipart/form-data for its file (imports/views.py).
    "DEFAULT_PARSER_CLASSES": ["finance.api.parsers.JSONObjectParser"],
    "DEFAULT_PAGINATION_CLASS": "finance.api.pagination.PageNumberPagination",
    "PAGE_SIZE": 25,
    "EXCEPTION_HANDLER": "finance.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "finance.api.schema.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "COERCE_DECIMAL_TO_STRING": True,
    "DATETIME_FORMAT": "%Y-%m-%dT%H:%M:%S.%fZ",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Personal Finance API",
    "DESCRIPTION": "A household's accounts, transactions, transfers, trades, imports and "
    "bank-data provider connections. Authenticate with the `X-Api-Key` header.",
    "VERSION": "v1",
    "OAS_VERSION": "3.0.3",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "AccountStatusEnum": "finance.models.ledger.Account.Status",
        "TransferStatusEnum": "finance.models.ledger.Transfer.Status",
        "TransactionKindEnum": "finance.models.ledger.Transaction.Kind",
        "TradeTypeEnum": "trades.services.trades.TYPES",
        "HoldingSourceEnum": "trades.models.Holding.Source",
        "ProviderEnum": "providers.models.ProviderConnection.Provider",
        "ImportTypeEnum": "imports.models.Import.Type",
        "ImportStatusEnum": "imports.models.Import.Status",
        "ImportMappingKindEnum": "imports.models.ImportMapping.Kind",
        "ImportReadbackStatusEnum": "imports.serializers.READBACK_STATUSES",
        "ExportStatusEnum": "exports.models.Status",
    },
    "SECURITY": [],
    "DISABLE_ERRORS_AND_WARNINGS": True,
}

# --- Celery: embedded filesystem broker by default, Redis (or any) when set --------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
if CELERY_BROKER_URL == "filesystem://":
    _broker_dir = DATA_DIR / "broker"
    # Every folder under DATA_DIR (kombu's control folder defaults to ./control, relative to
    # whatever directory a process was started from), created here for every process that
    # publishes or consumes: kombu makes the control folder without its parents.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
else:
    # A task is acknowledged when it ends (acks_late): one whose worker was killed outright is
    # handed out again once it has been unacknowledged for CELERY_VISIBILITY_TIMEOUT seconds
    # (a killed pool child is requeued at once: reject_on_worker_lost). Shorter than
    # SYNC_STUCK_MINUTES, so a lost sync is run again before the settler would fail it; a task
    # still running past it may be handed out twice, which the sync runner lock and the import's
    # row lock make harmless (docs/decisions.md, "Lost workers").
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_positive_int("CELERY_VISIBILITY_TIMEOUT", 900, maximum=86400),
        "unacked_restore_interval": env_positive_int("CELERY_RESTORE_INTERVAL", 10, maximum=3600),
        "unacked_restore_throttle": 1,
    }
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")

# --- Export and restore (docs/decisions.md "Export and restore") -------------------------------
# Archives are written under DATA_DIR/exports and deleted this many hours after they complete.
EXPORT_RETENTION_HOURS = env_positive_int("EXPORT_RETENTION_HOURS", 72, maximum=24 * 3650)
EXPORTS_DIR = DATA_DIR / "exports"
RESTORES_DIR = DATA_DIR / "restores"

# --- Providers ---------------------------------------------------------------------------------
# Every number is bounded: a value far out of range fails here, naming the setting, instead of
# in the middle of a sync (60 x SIMPLEFIN_DAILY_REQUEST_LIMIT days back once went before year 1).
PROVIDER_HTTP_TIMEOUT = env_float("PROVIDER_HTTP_TIMEOUT", 30.0, minimum=0.1, maximum=300)
# User-supplied provider URLs (SimpleFIN claim and access URLs) may reach private addresses.
PROVIDER_ALLOW_PRIVATE_URLS = env_bool("PROVIDER_ALLOW_PRIVATE_URLS", False)
LUNCHFLOW_BASE_URL = env.str("LUNCHFLOW_BASE_URL", default="https://lunchflow.app/api/v1")
LUNCHFLOW_INCLUDE_PENDING = env_bool("LUNCHFLOW_INCLUDE_PENDING", False)
SIMPLEFIN_INCLUDE_PENDING = env_bool("SIMPLEFIN_INCLUDE_PENDING", False)
SIMPLEFIN_DAILY_REQUEST_LIMIT = env_positive_int("SIMPLEFIN_DAILY_REQUEST_LIMIT", 24, maximum=1000)
SIMPLEFIN_HISTORY_DAYS = env_positive_int("SIMPLEFIN_HISTORY_DAYS", 365, maximum=3650)
SIMPLEFIN_RETRY_BASE_DELAY = env_float("SIMPLEFIN_RETRY_BASE_DELAY", 1.0, minimum=0, maximum=60)
SYNC_SCHEDULE_HOUR = env_int("SYNC_SCHEDULE_HOUR", 4, minimum=0, maximum=23)
SYNC_SCHEDULE_MINUTE = env_int("SYNC_SCHEDULE_MINUTE", 0, minimum=0, maximum=59)
SYNC_SCHEDULE_TIMEZONE = env.str("SYNC_SCHEDULE_TIMEZONE", default=TIME_ZONE)
SYNC_STALE_PENDING_DAYS = env_positive_int("SYNC_STALE_PENDING_DAYS", 14, maximum=3650)
LUNCHFLOW_HISTORY_DAYS = env_positive_int("LUNCHFLOW_HISTORY_DAYS", 365, maximum=3650)
PROVIDER_MAX_RETRY_AFTER = env_float("PROVIDER_MAX_RETRY_AFTER", 60.0, minimum=0, maximum=3600)
PROVIDER_MAX_429_WAITS = env_int("PROVIDER_MAX_429_WAITS", 3, minimum=0, maximum=10)
SYNC_OVERLAP_DAYS = env_positive_int("SYNC_OVERLAP_DAYS", 30, maximum=3650)
SYNC_MAX_RETRIES = env_int("SYNC_MAX_RETRIES", 3, minimum=0, maximum=20)
SYNC_RETRY_BACKOFF = env_positive_int("SYNC_RETRY_BACKOFF", 60, maximum=3600)
SYNC_STUCK_MINUTES = env_positive_int("SYNC_STUCK_MINUTES", 30, maximum=10080)
SYNC_SETTLE_INTERVAL_SECONDS = env_positive_int("SYNC_SETTLE_INTERVAL_SECONDS", 300, maximum=86400)
SYNC_SCHEDULE_CRON = env.str("SYNC_SCHEDULE_CRON", default="")
SYNC_INTERVAL_SECONDS = env_int("SYNC_INTERVAL_SECONDS", 0, minimum=0, maximum=604800)

# --- Exchange rates ----------------------------------------------------------------------------
# System rates: the European Central Bank's euro reference rates, fetched daily by beat
# ("none": no system rates are fetched; households can still post their own).
FX_PROVIDER = env_choice("FX_PROVIDER", ("ecb", "none"), "ecb")
FX_BASE_URL = env.str("FX_BASE_URL", default="https://www.ecb.europa.eu/stats/eurofxref")
# The ECB publishes around 16:00 CET on working days; fetched at this time in Europe/Berlin.
FX_SCHEDULE_HOUR = env.int("FX_SCHEDULE_HOUR", default=16)
FX_SCHEDULE_MINUTE = env.int("FX_SCHEDULE_MINUTE", default=30)

# --- Security (production values when DEBUG is off) ---------------------------------------------
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0, maximum=63072000)
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("USE_X_FORWARDED_PROTO", False) else None
)

LOG_LEVEL = env_choice("LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR"), "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact": {"()": "finance.logging.RedactSecretsFilter"}},
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["redact"]}
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# `manage.py demo` (run by `make run`) fills an empty demo household with a year of activity.
DEMO_DATA = env_bool("DEMO_DATA", True)
