"""The OpenAPI description of a CRUD resource's operations, derived from its declarations
(finance/api/resources.py): request and response shapes, filters, and a summary and a
description written for the API's clients, completed by the resource's own `notes`."""

from __future__ import annotations

from typing import Any

from finance.api.schema import filter_parameters
from finance.serializers.common import DeletedSerializer

PAGINATION = (
    "One page at a time: `page` (from 1) and `per_page` (25 by default, at most 100). The body "
    "holds `{key}` and `pagination` (`page`, `per_page`, `total_count`, `total_pages`); a page "
    "past the last is empty."
)
FILTERS = "An invalid filter value is a 422 naming it."
NOT_FOUND = "An unknown id, or the id of another household's record, is a 404."
INVALID = (
    "A 422 lists every invalid field (`errors`, each naming its field); an id of another "
    "household's record is refused as an unknown one."
)


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def _body(view: Any) -> str:
    return f"under the `{view.root_key}` key" if view.root_key else "as the body"


def _texts(view: Any, action: str) -> tuple[str, str, str]:
    """The summary, the lead (what the operation does and answers) and the fine print (paging,
    errors) of one operation; the resource's note goes between the two."""
    noun, plural = view.noun, view.plural
    one = f"{_article(noun)} {noun}"
    if action == "list":
        filters = f" {FILTERS}" if view.filters else ""
        key = view.results_key  # a class-level name, or a property of the instance
        paging = PAGINATION.format(key=key if isinstance(key, str) else plural.replace(" ", "_"))
        return f"List {plural}", f"The household's {plural}, {view.list_order}.", paging + filters
    if action == "retrieve":
        return f"Get {one}", f"One {noun}, by id.", NOT_FOUND
    if action == "create":
        created = (
            f"Answers 201 with the new {noun}, or 200 with the one already stored."
            if view.idempotent_create
            else f"Answers 201 with the new {noun}."
        )
        return f"Create {one}", f"Send the {noun}'s fields {_body(view)}. {created}", INVALID
    if action == "partial_update":
        return (
            f"Update {one}",
            f"Send the fields to change {_body(view)}; the others stay as they are. Answers the "
            f"updated {noun}.",
            f"{INVALID} {NOT_FOUND}",
        )
    if action == "update":
        return (
            f"Update {one} (PUT)",
            f"The same as PATCH: only the fields sent {_body(view)} change, none is required. "
            f"Answers the updated {noun}.",
            f"{INVALID} {NOT_FOUND}",
        )
    if action == "destroy":
        return (
            f"Delete {one}",
            f'Deletes the {noun} and answers 200 with `{{"message": "{view.label} deleted"}}`.',
            NOT_FOUND,
        )
    raise ValueError(action)


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
    summary, lead, fine_print = _texts(view, action)
    notes = view.notes
    note = notes.get(action) or (notes.get("partial_update") if action == "update" else None)
    out["summary"] = summary
    out["description"] = "\n\n".join(part for part in (lead, note, fine_print) if part)
    if action in view.examples:
        out["examples"] = list(view.examples[action])
    return out
