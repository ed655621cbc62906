"""The OpenAPI description of a CRUD resource's operations, derived from its declarations
(finance/api/resources.py): request and response shapes, filters, summaries, descriptions."""

from __future__ import annotations

from typing import Any

from finance.api.schema import filter_parameters
from finance.serializers.common import DeletedSerializer


def resource_operation(view: Any, action: str) -> dict[str, Any]:
    """request / responses / parameters / summary / description / examples of `action`, or {}
    for an action the base does not answer (an extra action documents itself)."""
    output = view.serializer_class
    if action == "list":
        out = {"responses": output(many=True), "parameters": filter_parameters(view.filters)}
    elif action == "retrieve":
        out = {"responses": output}
    elif action == "create":
        created = view.create_response or output
        responses = {201: created, 200: created} if view.idempotent_create else {201: created}
        out = {"request": view.create_request, "responses": responses}
    elif action in ("partial_update", "update"):
        out = {"request": view.update_request, "responses": output}
    elif action == "destroy":
        out = {"responses": {200: DeletedSerializer}, "parameters": list(view.destroy_parameters)}
    else:
        return {}
    return out
