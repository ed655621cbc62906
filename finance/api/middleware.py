"""Keeps every /api/ failure in the one error shape, including the ones Django raises itself."""

from __future__ import annotations

import logging
import tempfile
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse

from finance.api.errors import internal_error_response, json_error

logger = logging.getLogger("finance.api")
CHUNK_BYTES = 64 * 1024


def body_limit(path: str) -> int:
    """The largest request body for a path: an import upload's, a restore's archive, or any
    other API body's."""
    if path.startswith("/api/v1/restores"):
        return settings.RESTORE_MAX_UPLOAD_BYTES + 1024 * 1024  # multipart framing
    if path.startswith("/api/") and not path.startswith("/api/v1/imports"):
        return settings.API_MAX_BODY_BYTES
    return settings.IMPORT_MAX_UPLOAD_BYTES + 1024 * 1024  # multipart framing


class ChunkedBodyLimit:
    """WSGI middleware: Django reads a body by its Content-Length, so a chunked body (which
    has none) would read as empty and an oversized one would pass as a missing field. The body
    is read here into a spooled file, at most one byte past the path's limit, and handed on
    with its length; over the limit, that length makes ApiErrorMiddleware answer 413 as for
    any other oversized body (gunicorn discards the unread rest)."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not environ.get("CONTENT_LENGTH"):
            cap = body_limit(environ.get("PATH_INFO", "")) + 1
            # Read by the request after this returns, and dropped with it (an unnamed file).
            body = tempfile.SpooledTemporaryFile(  # noqa: SIM115
                max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE
            )
            size, stream = 0, environ["wsgi.input"]
            while size < cap:
                chunk = stream.read(min(CHUNK_BYTES, cap - size))
                if not chunk:
                    break
                body.write(chunk)
                size += len(chunk)
            body.seek(0)
            environ["wsgi.input"], environ["CONTENT_LENGTH"] = body, str(size)
        return self.app(environ, start_response)


class ApiErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith("/api/"):
            return self.get_response(request)
        request.request_id = uuid.uuid4().hex
        limit = body_limit(request.path)
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > limit:
            return self._too_large(limit)
        response = self.get_response(request)
        response["X-Request-Id"] = request.request_id
        return response

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
            return self._too_large(body_limit(request.path))
        if isinstance(exception, SuspiciousOperation):
            return json_error(400, "bad_request", "The request could not be understood.")
        logger.exception(
            "Unhandled error on %s %s (request id %s)",
            request.method,
            request.path,
            getattr(request, "request_id", "-"),
        )
        return internal_error_response(request)
