"""The project base viewset: household scoping, uuid lookups, rate-limit headers."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import Model, QuerySet
from rest_framework import viewsets
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from finance.api.throttling import rate_limit_headers
from finance.models import Family


class FamilyViewSet(viewsets.GenericViewSet):
    """Every query starts from the caller's household. `results_key` names the list body."""

    results_key: str = "results"
    lookup_value_regex = "[^/]+"

    @property
    def family(self) -> Family:
        return self.request.user.family

    def get_object(self) -> Model:
        raw = self.kwargs.get(self.lookup_url_kwarg or self.lookup_field)
        try:
            pk = uuid.UUID(str(raw))
        except ValueError:
            raise NotFound() from None
        obj = self.get_queryset().filter(pk=pk).first()
        if obj is None:
            raise NotFound()
        self.check_object_permissions(self.request, obj)
        return obj

    def paginated(self, queryset: QuerySet, serializer_class: Any = None) -> Response:
        rows = self.paginate_queryset(queryset)
        klass = serializer_class or self.get_serializer_class()
        # One serializer given each row, not a list serializer holding the page: a serializer
        # and its fields point at each other, so it is freed by the cycle collector, not when
        # this returns, and the rows it held (with their relations) waited for the oldest
        # generation's collection, a pause that made most of a list's p99 (bench/README.md).
        serializer = klass(context=self.get_serializer_context())
        return self.get_paginated_response([serializer.to_representation(r) for r in rows])

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        for name, value in rate_limit_headers(request).items():
            response[name] = value
        return response


def parse_uuid(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        return None
