"""`GET /healthz`: database and broker reachability, no key needed."""

from __future__ import annotations

import time

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET


def _check_database() -> dict[str, object]:
    started = time.monotonic()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return {"ok": False, "error": type(exc).__name__}
    return {
        "ok": True,
        "vendor": connection.vendor,
        "ms": round((time.monotonic() - started) * 1000, 1),
    }


def _check_broker() -> dict[str, object]:
    from config.celery import app

    started = time.monotonic()
    url = app.conf.broker_url or ""
    transport = url.split("://", 1)[0]
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        return {"ok": False, "transport": transport, "error": type(exc).__name__}
    return {"ok": True, "transport": transport, "ms": round((time.monotonic() - started) * 1000, 1)}


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _check_database(), "broker": _check_broker()}
    healthy = all(check["ok"] for check in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", "checks": checks},
        status=200 if healthy else 503,
    )
