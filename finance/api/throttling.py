"""A fixed-window rate limit per API key, with X-RateLimit-* headers on every response. The
count is shared by every process of the service (`config.cache`)."""

from __future__ import annotations

import time

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from config.cache import count_hit


class ApiKeyRateThrottle(BaseThrottle):
    def allow_request(self, request: Request, view: object) -> bool:
        key = request.auth
        if key is None:
            return True
        limit = settings.API_RATE_LIMIT
        window = settings.API_RATE_LIMIT_WINDOW
        now = time.time()
        window_start = int(now // window) * window
        reset = window_start + window
        count = count_hit(f"rl:{key.pk}:{window_start}", timeout=window + 5)
        self._wait = max(1, int(reset - now + 0.999))
        request.rate_limit = {
            "limit": limit,
            "remaining": max(0, limit - count),
            "reset": int(reset),
            "window_seconds": window,
        }
        return count <= limit

    def wait(self) -> float:
        return self._wait


def rate_limit_headers(request: Request) -> dict[str, str]:
    info = getattr(request, "rate_limit", None)
    if not info:
        return {}
    return {
        "X-RateLimit-Limit": str(info["limit"]),
        "X-RateLimit-Remaining": str(info["remaining"]),
        "X-RateLimit-Reset": str(info["reset"]),
    }
