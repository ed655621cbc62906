"""What a rule may say (decisions.md "Rules"), and the check of a rule's body.

`rule_fields_validate` checks every field, condition and action of a request body, naming each
problem by its path (`conditions[0].operator: ...`), and returns the fields normalised as they
are stored and shown: ids as canonical strings, amounts as decimal strings, dates ISO."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, TypedDict

import regex

from core.errors import ValidationFailed
from finance.models import Account, Category, Family, Merchant, Tag

TEXT, NUMBER, DATE, ID = "text", "number", "date", "id"
FIELDS: dict[str, str] = {
    "name": TEXT,
    "notes": TEXT,
    "merchant": TEXT,
    "amount": NUMBER,
    "account_id": ID,
    "category_id": ID,
    "currency": TEXT,
    "date": DATE,
    "source": TEXT,
}
ORDERED = ("equals", "gt", "gte", "lt", "lte", "between", "is_empty")
OPERATORS: dict[str, tuple[str, ...]] = {
    TEXT: ("contains", "equals", "starts_with", "ends_with", "matches", "is_empty"),
    NUMBER: ORDERED,
    DATE: ORDERED,
    ID: ("equals", "in", "is_empty"),
}
# The action types, and the transaction field each one sets (what `edited_fields` and a
# transaction's `rule_changes` name).
ACTIONS: dict[str, str] = {
    "set_category": "category",
    "set_merchant": "merchant",
    "add_tags": "tags",
    "remove_tags": "tags",
    "set_name": "name",
    "set_notes": "notes",
    "exclude": "excluded",
}
SINGLE_VALUED = frozenset({"set_category", "set_merchant", "set_name", "set_notes", "exclude"})
MATCHES = ("all", "any")
RULE_KEYS = ("name", "active", "match", "conditions", "actions", "position")
READ_ONLY_KEYS = ("id", "created_at", "updated_at")
MAX_CONDITIONS = 50
MAX_ACTIONS = 20
MAX_IDS = 100
MAX_TEXT = 255
MAX_PATTERN = 500
MAX_POSITION = 1_000_000
MAX_AMOUNT = Decimal("1e15")

REQUIRED = "This field is required."
NOT_IN_HOUSEHOLD = "does not exist in this household"
UNKNOWN_KEY = "unknown field"
NOT_A_LIST = "must be a list"
NOT_AN_OBJECT = "must be an object"
NOT_TEXT = "must be a non-blank string of at most {max} characters"
NOT_BOOLEAN = "must be true or false"
NOT_MERCHANT = f"must be a merchant id or a non-blank name of at most {MAX_TEXT} characters"
NOT_AN_INTEGER = f"must be an integer from 0 to {MAX_POSITION}"
NOT_A_NUMBER = "must be a number (a JSON number or a decimal string)"
NOT_A_DATE = "must be a date, YYYY-MM-DD"
NOT_AN_ID = "must be a uuid"
NOT_A_PAIR = "must be a list of two values, [low, high], low <= high"
NOT_IDS = f"must be a non-empty list of at most {MAX_IDS} uuids"
BAD_PATTERN = "is not a valid regular expression: {error}"
LIST_SIZE = "must hold from 1 to {max} items"
REPEATED_ACTION = "{type} appears more than once"


class RuleCondition(TypedDict):
    field: str
    operator: str
    value: Any


class RuleAction(TypedDict):
    type: str
    value: Any


class RuleFields(TypedDict, total=False):
    """A rule's writable fields, as the API and the admin give them (checked by
    `rule_fields_validate`, which names what is wrong in them)."""

    name: str
    active: bool
    match: str
    conditions: list[RuleCondition]
    actions: list[RuleAction]
    position: int


def _one_of(values: Any) -> str:
    return "one of " + ", ".join(values)


class _Errors(list):
    def add(self, path: str, message: str) -> None:
        self.append(f"{path}: {message}")


def _text(value: Any, limit: int = MAX_TEXT) -> str | None:
    if not isinstance(value, str) or not value.strip() or len(value) > limit or "\x00" in value:
        return None
    return value


def _number(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal, str, float)):
        return None
    try:
        number = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    if not number.is_finite() or abs(number) >= MAX_AMOUNT:
        return None
    return f"{number:f}"


def _date(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) != 10:
        return None
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        return None


def _uuid(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


class _Refs:
    """The ids a body names, checked against the household in one query per kind."""

    def __init__(self) -> None:
        self.wanted: list[tuple[str, str, str]] = []  # (path, kind, id)

    def want(self, path: str, kind: str, pk: str) -> None:
        self.wanted.append((path, kind, pk))

    def check(self, family: Family, errors: _Errors) -> None:
        models = {"account": Account, "category": Category, "merchant": Merchant, "tag": Tag}
        known: dict[str, set[str]] = {}
        for kind, model in models.items():
            ids = {pk for _, k, pk in self.wanted if k == kind}
            if ids:
                found = model.objects.filter(family=family, pk__in=ids).values_list("pk", flat=True)
                known[kind] = {str(pk) for pk in found}
        for path, kind, pk in self.wanted:
            if pk not in known.get(kind, set()):
                errors.add(path, f"{pk} {NOT_IN_HOUSEHOLD}")


def _ids(value: Any, path: str, kind: str, refs: _Refs, errors: _Errors) -> list[str] | None:
    if not isinstance(value, list) or not value or len(value) > MAX_IDS:
        errors.add(path, NOT_IDS)
        return None
    out = []
    for i, item in enumerate(value):
        pk = _uuid(item)
        if pk is None:
            errors.add(f"{path}[{i}]", NOT_AN_ID)
            continue
        refs.want(path, kind, pk)
        out.append(pk)
    return list(dict.fromkeys(out))


def _unknown_keys(item: Mapping[str, Any], allowed: tuple[str, ...], path: str, errors: _Errors):
    for key in item:
        if key not in allowed:
            errors.add(f"{path}.{key}" if path else key, UNKNOWN_KEY)


def _condition(item: Any, path: str, refs: _Refs, errors: _Errors) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        errors.add(path, NOT_AN_OBJECT)
        return None
    _unknown_keys(item, ("field", "operator", "value"), path, errors)
    field, operator, value = item.get("field"), item.get("operator"), item.get("value")
    kind = FIELDS.get(field) if isinstance(field, str) else None
    if kind is None:
        errors.add(f"{path}.field", REQUIRED if field is None else _one_of(FIELDS))
        return None
    if not isinstance(operator, str) or operator not in OPERATORS[kind]:
        message = REQUIRED if operator is None else f"{_one_of(OPERATORS[kind])} for {field}"
        errors.add(f"{path}.operator", message)
        return None
    at = f"{path}.value"
    normal: Any
    if operator == "is_empty":
        if value is not None and not isinstance(value, bool):
            errors.add(at, NOT_BOOLEAN + " (or left out: true)")
            return None
        normal = True if value is None else value
    elif "value" not in item:
        errors.add(at, REQUIRED)
        return None
    elif kind == TEXT:
        limit = MAX_PATTERN if operator == "matches" else MAX_TEXT
        normal = _text(value, limit)
        if normal is None:
            errors.add(at, NOT_TEXT.format(max=limit))
            return None
        if operator == "matches":
            try:
                regex.compile(normal, regex.IGNORECASE)
            except (regex.error, ValueError, OverflowError, RecursionError) as exc:
                errors.add(at, BAD_PATTERN.format(error=str(exc)[:200]))
                return None
    elif kind in (NUMBER, DATE):
        parse = _number if kind == NUMBER else _date
        bad = NOT_A_NUMBER if kind == NUMBER else NOT_A_DATE
        if operator == "between":
            pair = [parse(v) for v in value] if isinstance(value, list) and len(value) == 2 else []
            if len(pair) != 2 or None in pair:
                errors.add(at, f"{NOT_A_PAIR}; each {bad.removeprefix('must be ')}")
                return None
            low, high = pair
            ordered = Decimal(low) <= Decimal(high) if kind == NUMBER else low <= high
            if not ordered:
                errors.add(at, NOT_A_PAIR)
                return None
            normal = pair
        else:
            normal = parse(value)
            if normal is None:
                errors.add(at, bad)
                return None
    else:  # an id
        id_kind = "account" if field == "account_id" else "category"
        if operator == "in":
            normal = _ids(value, at, id_kind, refs, errors)
            if normal is None:
                return None
        else:
            normal = _uuid(value)
            if normal is None:
                errors.add(at, NOT_AN_ID)
                return None
            refs.want(at, id_kind, normal)
    return {"field": field, "operator": operator, "value": normal}


def _action(item: Any, path: str, refs: _Refs, errors: _Errors) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        errors.add(path, NOT_AN_OBJECT)
        return None
    _unknown_keys(item, ("type", "value"), path, errors)
    kind, value, at = item.get("type"), item.get("value"), f"{path}.value"
    if not isinstance(kind, str) or kind not in ACTIONS:
        errors.add(f"{path}.type", REQUIRED if kind is None else _one_of(ACTIONS))
        return None
    normal: Any = None
    if kind == "set_category":
        normal = _uuid(value)
        if normal is None:
            errors.add(at, NOT_AN_ID)
            return None
        refs.want(at, "category", normal)
    elif kind == "set_merchant":
        normal = _uuid(value) if isinstance(value, str) else None
        if normal is not None:
            refs.want(at, "merchant", normal)
        else:
            normal = _text(value)
            if normal is None:
                errors.add(at, NOT_MERCHANT)
                return None
            normal = normal.strip()
    elif kind in ("add_tags", "remove_tags"):
        normal = _ids(value, at, "tag", refs, errors)
        if normal is None:
            return None
    elif kind == "set_name":
        normal = _text(value)
        if normal is None:
            errors.add(at, NOT_TEXT.format(max=MAX_TEXT))
            return None
        normal = normal.strip()
    elif kind == "set_notes":
        if value is not None and not isinstance(value, str):
            errors.add(at, "must be a string (empty or null: no notes)")
            return None
        normal = (value or "").strip() or None
    else:  # exclude
        if not isinstance(value, bool):
            errors.add(at, NOT_BOOLEAN)
            return None
        normal = value
    return {"type": kind, "value": normal}


def _items(
    value: Any, path: str, limit: int, check: Any, refs: _Refs, errors: _Errors
) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        errors.add(path, NOT_A_LIST)
        return None
    if not value or len(value) > limit:
        errors.add(path, LIST_SIZE.format(max=limit))
        return None
    out = [check(item, f"{path}[{i}]", refs, errors) for i, item in enumerate(value)]
    return None if None in out else out


def rule_fields_validate(*, family: Family, data: Any, partial: bool = False) -> dict[str, Any]:
    """The body of a rule, checked and normalised; a 422 naming every problem. `partial`: an
    update, where only the fields sent change (a list sent replaces the stored one)."""
    if not isinstance(data, dict):
        raise ValidationFailed([f"rule: {NOT_AN_OBJECT}"])
    errors, refs = _Errors(), _Refs()
    out: dict[str, Any] = {}
    _unknown_keys(data, RULE_KEYS + READ_ONLY_KEYS, "", errors)
    if not partial:
        for key in ("name", "conditions", "actions"):
            if key not in data:
                errors.add(key, REQUIRED)
    if "name" in data:
        name = _text(data["name"])
        if name is None:
            errors.add("name", NOT_TEXT.format(max=MAX_TEXT))
        else:
            out["name"] = name.strip()
    if "active" in data:
        if isinstance(data["active"], bool):
            out["active"] = data["active"]
        else:
            errors.add("active", NOT_BOOLEAN)
    if "match" in data:
        if isinstance(data["match"], str) and data["match"] in MATCHES:
            out["match"] = data["match"]
        else:
            errors.add("match", _one_of(MATCHES))
    if "position" in data:
        position = data["position"]
        if type(position) is int and 0 <= position <= MAX_POSITION:
            out["position"] = position
        else:
            errors.add("position", NOT_AN_INTEGER)
    if "conditions" in data:
        conditions = _items(
            data["conditions"], "conditions", MAX_CONDITIONS, _condition, refs, errors
        )
        if conditions is not None:
            out["conditions"] = conditions
    if "actions" in data:
        actions = _items(data["actions"], "actions", MAX_ACTIONS, _action, refs, errors)
        if actions is not None:
            seen: set[str] = set()
            for i, action in enumerate(actions):
                if action["type"] in SINGLE_VALUED and action["type"] in seen:
                    errors.add(f"actions[{i}].type", REPEATED_ACTION.format(type=action["type"]))
                seen.add(action["type"])
            out["actions"] = actions
    refs.check(family, errors)
    if errors:
        raise ValidationFailed(list(errors))
    return out
