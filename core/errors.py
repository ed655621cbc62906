"""Errors of the domain. Services and selectors raise these; the API layer alone turns them
into the one error shape (finance/api/errors.py), the admin into messages.

Each error says what went wrong in words a household understands. `ValidationFailed` carries
one "field: problem" string per problem, so every field at fault is named at once."""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A request the domain refuses. `code` is the error's stable name."""

    code = "error"

    def __init__(
        self, message: str, *, errors: list[str] | None = None, details: Any = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors
        self.details = details


class ValidationFailed(ApplicationError):
    """Invalid input: one message per problem, each naming its field."""

    code = "validation_failed"

    def __init__(self, errors: list[str] | dict[str, Any], message: str | None = None) -> None:
        messages = flatten_errors(errors) if isinstance(errors, dict) else list(errors)
        super().__init__(message or "Validation failed: " + "; ".join(messages), errors=messages)


class Conflict(ApplicationError):
    """The request is valid but the record's state does not allow it now."""

    code = "conflict"


class NotFound(ApplicationError):
    """The record does not exist in the caller's household (or at all)."""

    code = "not_found"

    def __init__(self, message: str = "The requested resource was not found.") -> None:
        super().__init__(message)


def flatten_errors(detail: Any, prefix: str = "") -> list[str]:
    """Nested error details as "field: message" strings, one per problem."""
    if isinstance(detail, dict):
        out: list[str] = []
        for key, value in detail.items():
            if key in ("non_field_errors", "__all__"):
                out.extend(flatten_errors(value, prefix))
            else:
                out.extend(flatten_errors(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [f"{prefix}: {item}" if prefix else str(item) for item in detail]
        out = []
        for index, item in enumerate(detail):
            if item:
                out.extend(flatten_errors(item, f"{prefix}[{index}]"))
        return out
    return [f"{prefix}: {detail}" if prefix else str(detail)]
