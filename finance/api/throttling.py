"""A fixed-window rate limit per API key, with X-RateLimit-* headers on every response."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle


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
        cache_key = f"rl:{key.pk}:{window_start}"
        cache.add(cache_key, 0, timeout=window + 5)
        try:
            count = cache.incr(cache_key)
        except ValueError:  # evicted between add and incr
            cache.set(cache_key, 1, timeout=window + 5)
            count = 1
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
