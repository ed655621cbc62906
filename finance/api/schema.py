"""OpenAPI generation: every operation declares the X-Api-Key scheme and its error responses."""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class ErrorResponseSerializer(serializers.Serializer):
    error = serializers.CharField()
    message = serializers.CharField(allow_null=True, required=False)
    errors = serializers.ListField(child=serializers.CharField(), allow_null=True, required=False)
    details = serializers.JSONField(allow_null=True, required=False)

    class Meta:
        ref_name = "ErrorResponse"


_ERRORS = {
    "400": "The body is not valid JSON, or not an object.",
    "401": "X-Api-Key missing, unknown, revoked or expired.",
    "403": "A read key on a write operation.",
    "404": "Unknown id, or a record of another household.",
    "409": "The record's state does not allow this operation.",
    "413": "The body is larger than the configured limit.",
    "415": "Unsupported media type.",
    "422": "Missing or invalid fields or filters.",
    "429": "Rate limit exceeded; see Retry-After.",
}
_WRITE = {"POST", "PUT", "PATCH", "DELETE"}


class AutoSchema(openapi.AutoSchema):
    def _get_paginator(self):
        paginator = super()._get_paginator()
        if paginator is not None:
            paginator.results_key = getattr(self.view, "results_key", "results")
        return paginator

    def _get_response_bodies(self, direction: str = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        if direction != "response" or not self._is_api_operation():
            return responses
        codes = ["401", "422", "429"]
        if "{" in self.path:
            codes.append("404")
        if self.method in _WRITE:
            codes += ["400", "403", "409", "413", "415"]
        for code in codes:
            if code not in responses:
                responses[code] = self._get_response_for_code(
                    OpenApiResponse(ErrorResponseSerializer, description=_ERRORS[code]), code
                )
        return responses

    def _is_api_operation(self) -> bool:
        return bool(getattr(self.view, "authentication_classes", None))
