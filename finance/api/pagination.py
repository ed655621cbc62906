"""`page` and `per_page` (default 25, clamped to 100); the body names the resource plural."""

from __future__ import annotations

import math
from typing import Any

from django.core.paginator import InvalidPage
from rest_framework import pagination
from rest_framework.request import Request
from rest_framework.response import Response

from finance.api.errors import ValidationFailed

DEFAULT_PER_PAGE = 25
MAX_PER_PAGE = 100
MAX_PAGE = 10_000_000  # keeps offsets far inside every database's integer range


def _positive_int(request: Request, name: str, default: int, maximum: int | None = None) -> int:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValidationFailed([f"{name}: must be a positive integer"]) from None
    if value < 1:
        raise ValidationFailed([f"{name}: must be a positive integer"])
    if maximum is not None and value > maximum:
        raise ValidationFailed([f"{name}: must be at most {maximum}"])
    return value


class PageNumberPagination(pagination.BasePagination):
    """Offset pagination with the documented body. `results_key` comes from the view."""

    def paginate_queryset(self, queryset: Any, request: Request, view: Any = None) -> list[Any]:
        self.page = _positive_int(request, "page", 1, maximum=MAX_PAGE)
        self.per_page = min(_positive_int(request, "per_page", DEFAULT_PER_PAGE), MAX_PER_PAGE)
        self.results_key = getattr(view, "results_key", None) or "results"
        offset = (self.page - 1) * self.per_page
        page_rows = getattr(queryset, "page_rows", None)
        if page_rows is not None:  # the queryset reads its pages itself (TransactionQuerySet)
            rows, total = page_rows(offset, self.per_page)
        else:
            rows, total = list(queryset[offset : offset + self.per_page]), None
        if len(rows) < self.per_page and (rows or offset == 0):
            # A short page is the last one: its rows give the count without a COUNT(*).
            self.total_count = offset + len(rows)
        elif total is not None:  # the page's read counted the matches (COUNT(*) OVER ())
            self.total_count = total
        else:
            self.total_count = queryset.count()
        return rows

    def pagination_meta(self) -> dict[str, int]:
        return {
            "page": self.page,
            "per_page": self.per_page,
            "total_count": self.total_count,
            "total_pages": math.ceil(self.total_count / self.per_page) if self.total_count else 0,
        }

    def get_paginated_response(self, data: list[Any]) -> Response:
        return Response({self.results_key: data, "pagination": self.pagination_meta()})

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        key = getattr(self, "results_key", "results")
        return {
            "type": "object",
            "required": [key, "pagination"],
            "properties": {
                key: schema,
                "pagination": {
                    "type": "object",
                    "required": ["page", "per_page", "total_count", "total_pages"],
                    "properties": {
                        k: {"type": "integer"}
                        for k in ("page", "per_page", "total_count", "total_pages")
                    },
                },
            },
        }

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        return [
            {
                "name": "page",
                "in": "query",
                "required": False,
                "schema": {"type": "integer", "minimum": 1},
            },
            {
                "name": "per_page",
                "in": "query",
                "required": False,
                "description": "Rows per page, default 25; values above 100 are clamped to 100.",
                "schema": {"type": "integer", "minimum": 1},
            },
        ]


__all__ = ["InvalidPage", "PageNumberPagination"]
