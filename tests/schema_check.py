"""Every API response the suite receives is checked against the documented OpenAPI schema.

The conftest wraps the test client: a response whose status is not documented for its
operation, or whose JSON body does not match the documented schema, fails the test."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from openapi_schema_validator import OAS30Validator


class SchemaMismatch(AssertionError):
    pass


@lru_cache(maxsize=1)
def _document() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def _deref(node: Any, doc: dict[str, Any], depth: int = 0) -> Any:
    if depth > 40:
        return {}
    if isinstance(node, dict):
        if "$ref" in node:
            target: Any = doc
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            return _deref(target, doc, depth + 1)
        if node.get("nullable") and len(node.get("allOf", [])) == 1:
            # drf-spectacular writes a nullable $ref as allOf + nullable; fold it for validation
            merged = dict(_deref(node["allOf"][0], doc, depth + 1))
            merged["nullable"] = True
            return merged
        return {k: _deref(v, doc, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [_deref(v, doc, depth + 1) for v in node]
    return node


@lru_cache(maxsize=1)
def _routes() -> list[tuple[re.Pattern[str], str]]:
    routes = []
    for template in _document()["paths"]:
        pattern = re.escape(template)
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", pattern)
        routes.append((re.compile(f"^{pattern}$"), template))
    # literal segments beat parameters: /imports/{id}/rows before /imports/{id}
    routes.sort(key=lambda r: r[1].count("{"))
    return routes


def check_response(method: str, path: str, status: int, content: bytes, content_type: str) -> None:
    if not path.startswith("/api/v1/") or path.startswith(("/api/v1/openapi", "/api/v1/docs")):
        return
    doc = _document()
    template = next((t for rx, t in _routes() if rx.match(path)), None)
    if template is None:
        if status == 404:
            return  # unknown routes answer 404 in the error shape, checked elsewhere
        raise SchemaMismatch(f"{method} {path}: no documented path")
    operation = doc["paths"][template].get(method.lower())
    if operation is None:
        if status == 405:
            return
        raise SchemaMismatch(f"{method} {template}: operation not documented")
    responses = operation["responses"]
    spec = responses.get(str(status)) or responses.get("default")
    if spec is None:
        raise SchemaMismatch(
            f"{method} {template}: status {status} not documented (has {sorted(responses)})"
        )
    media = (spec.get("content") or {}).get("application/json")
    if media is None or not content or not content_type.startswith("application/json"):
        return
    schema = _deref(media.get("schema", {}), doc)
    body = json.loads(content)
    errors = list(OAS30Validator(schema).iter_errors(body))
    if errors:
        first = errors[0]
        where = "/".join(map(str, first.absolute_path))
        raise SchemaMismatch(f"{method} {template} {status}: at {where!r}: {first.message}")
