"""OpenAPI generation: every operation declares the X-Api-Key scheme and its error responses;
the CRUD resources' operations are described from their declarations (finance/api/resources.py);
descriptions are written for clients, never taken from docstrings (those are for developers)."""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import build_choice_field
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from core.filters import query_params


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


class TextChoiceFieldExtension(OpenApiSerializerFieldExtension):
    """A `TextChoiceField` is documented as the string it is, with its values as an enum."""

    target_class = "finance.serializers.fields.TextChoiceField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        text = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        return {
            **text,
            **build_choice_field(serializers.ChoiceField(self.target.documented_choices)),
        }


def filter_parameters(filters: type | None) -> list[OpenApiParameter]:
    """The query parameters of a list, from its filter dataclass (core.filters)."""
    out = []
    for attr, spec in query_params(filters) if filters is not None else ():
        name = spec.name or attr
        if spec.kind == "uuid_list":
            kind: Any = {"type": "array", "items": {"type": "string"}}
            out.append(OpenApiParameter(f"{name}[]", kind, description=spec.description))
        elif spec.kind == "choice":
            out.append(
                OpenApiParameter(name, str, enum=list(spec.choices), description=spec.description)
            )
        else:
            kind = bool if spec.kind == "boolean" else str
            out.append(OpenApiParameter(name, kind, description=spec.description))
    return out


class AutoSchema(openapi.AutoSchema):
    """What `@extend_schema` on a method says wins; then the view's declarations
    (`declared_operation`); then drf-spectacular's introspection, without docstrings."""

    def _declared(self) -> dict[str, Any]:
        declared = getattr(self.view, "declared_operation", None)
        action = getattr(self.view, "action", None)
        return declared(action) if declared is not None and action else {}

    def get_request_serializer(self) -> Any:
        declared = self._declared()
        return declared["request"] if "request" in declared else super().get_request_serializer()

    def get_response_serializers(self) -> Any:
        declared = self._declared()
        if "responses" in declared:
            return declared["responses"]
        return super().get_response_serializers()

    def get_override_parameters(self) -> list[Any]:
        return [*super().get_override_parameters(), *self._declared().get("parameters", [])]

    def get_summary(self) -> str | None:
        return self._declared().get("summary") or super().get_summary()

    def get_description(self) -> str:  # type: ignore[override]
        return self._declared().get("description", "")

    def _map_basic_serializer(self, serializer: Any, direction: Any) -> dict[str, Any]:
        # A component's description is its serializer's `Meta.description` (for clients), never
        # the class docstring (for developers), which drf-spectacular would show.
        schema = super()._map_basic_serializer(serializer, direction)
        schema.pop("description", None)
        description = getattr(getattr(serializer, "Meta", None), "description", None)
        if description:
            schema["description"] = description
        return schema

    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        # COMPONENT_SPLIT_REQUEST names request components "<name>Request": a request
        # serializer's own "Request" suffix would make it "...RequestRequest".
        name = super().get_serializer_name(serializer, direction)
        if name.endswith("RequestSerializer"):
            name = name.removesuffix("RequestSerializer") + "Serializer"
        return name

    def get_examples(self) -> list[Any]:
        return [*super().get_examples(), *self._declared().get("examples", [])]

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
