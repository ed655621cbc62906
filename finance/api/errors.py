"""The one error shape under /api/: {"error", "message", "errors"?, "details"?}."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response

from core.errors import ApplicationError, Conflict, NotFound, ValidationFailed, flatten_errors

__all__ = ["ApiError", "Conflict", "NotFound", "ValidationFailed", "error_body", "flatten_errors"]

logger = logging.getLogger("finance.api")


class ApiError(exceptions.APIException):
    """An HTTP-only error with an explicit status and code, raised by views (never by services:
    they raise `core.errors` application errors, mapped below)."""

    def __init__(
        self,
        status_code: int,
        error: str,
        message: str,
        *,
        errors: list[str] | None = None,
        details: Any = None,
    ) -> None:
        self.status_code = status_code
        self.error = error
        self.message = message
        self.errors = errors
        self.details = details
        super().__init__(message)


# Each application error's status; its `code` is the body's `error`.
APPLICATION_STATUS: dict[type[ApplicationError], int] = {
    ValidationFailed: 422,
    Conflict: 409,
    NotFound: 404,
}


def error_body(
    error: str, message: str, *, errors: list[str] | None = None, details: Any = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"error": error, "message": message}
    if errors is not None:
        body["errors"] = errors
    if details is not None:
        body["details"] = details
    return body


_SIMPLE = {
    exceptions.NotAuthenticated: (401, "unauthorized"),
    exceptions.AuthenticationFailed: (401, "unauthorized"),
    exceptions.NotFound: (404, "not_found"),
    exceptions.MethodNotAllowed: (405, "method_not_allowed"),
    exceptions.NotAcceptable: (406, "not_acceptable"),
    exceptions.UnsupportedMediaType: (415, "unsupported_media_type"),
    exceptions.ParseError: (400, "bad_request"),
}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    headers: dict[str, str] = {}
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()

    if isinstance(exc, ApplicationError):
        code = next(
            (status for klass, status in APPLICATION_STATUS.items() if isinstance(exc, klass)), 400
        )
        body = error_body(exc.code, exc.message, errors=exc.errors, details=exc.details)
    elif isinstance(exc, ApiError):
        body = error_body(exc.error, exc.message, errors=exc.errors, details=exc.details)
        code = exc.status_code
    elif isinstance(exc, exceptions.ValidationError):
        messages = flatten_errors(exc.detail)
        body = error_body(
            "validation_failed", "Validation failed: " + "; ".join(messages), errors=messages
        )
        code = 422
    elif isinstance(exc, exceptions.Throttled):
        wait = int(exc.wait or 1)
        headers["Retry-After"] = str(wait)
        request = context.get("request")
        details = getattr(request, "rate_limit", None) or {}
        body = error_body(
            "rate_limited",
            f"Rate limit exceeded. Try again in {wait} seconds.",
            details={**details, "retry_after": wait},
        )
        code = 429
    elif isinstance(exc, exceptions.PermissionDenied):
        body = error_body("insufficient_scope", str(exc.detail))
        code = 403
    elif isinstance(exc, exceptions.NotFound):
        body = error_body("not_found", "The requested resource was not found.")
        code = 404
    elif isinstance(exc, exceptions.MethodNotAllowed):
        body = error_body("method_not_allowed", str(exc.detail))
        code = 405
    elif type(exc) in _SIMPLE or isinstance(exc, exceptions.APIException):
        code, error = _SIMPLE.get(type(exc), (exc.status_code, "error"))
        for klass, mapped in _SIMPLE.items():
            if isinstance(exc, klass):
                code, error = mapped
                break
        message = str(exc.detail) if hasattr(exc, "detail") else str(exc)
        if code == 400:
            message = f"The request body is not valid JSON: {message}"
        body = error_body(error, message)
        if code == 401:
            headers["WWW-Authenticate"] = "X-Api-Key"
    else:
        return None  # a bug: the middleware answers 500 with a request id
    return Response(body, status=code, headers=headers)


def json_error(status_code: int, error: str, message: str, **kwargs: Any) -> JsonResponse:
    return JsonResponse(error_body(error, message, **kwargs), status=status_code)


@csrf_exempt  # an unrouted POST answers the JSON 404, not Django's CSRF page
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    return json_error(404, "not_found", f"No API route matches {request.path}.")


def internal_error_response(request: HttpRequest) -> JsonResponse:
    request_id = getattr(request, "request_id", None) or uuid.uuid4().hex
    return json_error(
        status.HTTP_500_INTERNAL_SERVER_ERROR,
        "internal_error",
        f"An internal error occurred. Quote request id {request_id} when reporting it.",
        details={"request_id": request_id},
    )


def handler404(request: HttpRequest, exception: Exception | None = None):
    if request.path.startswith("/api/"):
        return api_not_found(request)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def handler500(request: HttpRequest):
    if request.path.startswith("/api/"):
        return internal_error_response(request)
    from django.views.defaults import server_error

    return server_error(request)
