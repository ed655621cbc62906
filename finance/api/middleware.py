"""Keeps every /api/ failure in the one error shape, including the ones Django raises itself."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse

from finance.api.errors import internal_error_response, json_error

logger = logging.getLogger("finance.api")


class ApiErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith("/api/"):
            return self.get_response(request)
        request.request_id = uuid.uuid4().hex
        limit = self._limit_for(request)
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > limit:
            return self._too_large(limit)
        response = self.get_response(request)
        response["X-Request-Id"] = request.request_id
        return response

    @staticmethod
    def _limit_for(request: HttpRequest) -> int:
        if request.path.startswith("/api/v1/imports"):
            return settings.IMPORT_MAX_UPLOAD_BYTES + 1024 * 1024  # multipart framing
        return settings.API_MAX_BODY_BYTES

    @staticmethod
    def _too_large(limit: int) -> HttpResponse:
        return json_error(
            413,
            "payload_too_large",
            f"The request body is larger than the limit of {limit} bytes.",
            details={"limit_bytes": limit},
        )

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not request.path.startswith("/api/"):
            return None
        if isinstance(exception, RequestDataTooBig):
            return self._too_large(self._limit_for(request))
        if isinstance(exception, SuspiciousOperation):
            return json_error(400, "bad_request", "The request could not be understood.")
        logger.exception(
            "Unhandled error on %s %s (request id %s)",
            request.method,
            request.path,
            getattr(request, "request_id", "-"),
        )
        return internal_error_response(request)
