"""A fast path for the fields of one transaction in a bulk request.

DRF's field machinery is a large share of a bulk request's cost (bench/README.md). This checks
the common, well-formed shape of an item directly and returns exactly what
`TransactionFieldsSerializer().run_validation(item)` returns for it; anything it is not sure
of (a wrong type, a blank, a value out of range, a rule that would fail) answers None, and the
item goes through the serializer, which then also words the errors. So the serializer stays
the one statement of the rules: tests/finance/test_bulk_fast_path.py checks, over generated
items, that whatever this accepts the serializer accepts with the same result."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from rest_framework import serializers

from core.bounds import date_problem
from finance.currencies import is_currency
from finance.serializers.fields import NOTES_MAX_LENGTH, AmountField, parse_strict_date

_AMOUNT = AmountField()


class _Unsure(Exception):
    """The fast path cannot vouch for this value: let the serializer decide."""


def _uuid(value: Any) -> uuid.UUID:
    if type(value) is not str:
        raise _Unsure
    try:
        return uuid.UUID(hex=value)
    except ValueError:
        raise _Unsure from None


def _date(value: Any) -> Any:
    try:
        day = parse_strict_date(value)
    except ValueError:
        raise _Unsure from None
    if date_problem(day):
        raise _Unsure
    return day


def _amount(value: Any) -> Any:
    if type(value) not in (str, int, Decimal):
        raise _Unsure
    try:
        return _AMOUNT.to_internal_value(value)
    except serializers.ValidationError:
        raise _Unsure from None


def _text(max_length: int | None, *, blank: bool) -> Callable[[Any], str]:
    """DRF's CharField: stripped; blank only if allowed; no NUL, no lone surrogate."""

    def check(value: Any) -> str:
        if type(value) is not str:
            raise _Unsure
        text = value.strip()
        if not text:
            if blank:
                return ""
            raise _Unsure
        if (max_length is not None and len(text) > max_length) or "\x00" in text:
            raise _Unsure
        try:
            text.encode("utf-8")  # a lone surrogate cannot be encoded
        except UnicodeEncodeError:
            raise _Unsure from None
        return text

    return check


def _currency(value: Any) -> str:
    if type(value) is not str:
        raise _Unsure
    code = value.strip().upper()
    if len(code) != 3 or not is_currency(code):
        raise _Unsure
    return code


def _nature(value: Any) -> str:
    if value not in ("income", "expense", "inflow", "outflow") or type(value) is not str:
        raise _Unsure
    return value


def _boolean(value: Any) -> bool:
    if type(value) is not bool:
        raise _Unsure
    return value


def _uuid_list(value: Any) -> list[uuid.UUID]:
    if type(value) is not list or len(value) > 100:
        raise _Unsure
    return [_uuid(v) for v in value]


# (field, check, required, null allowed): TransactionFieldsSerializer's fields, in its order.
_FIELDS: tuple[tuple[str, Callable[[Any], Any], bool, bool], ...] = (
    ("account_id", _uuid, True, False),
    ("date", _date, True, False),
    ("amount", _amount, True, False),
    ("name", _text(255, blank=False), False, False),
    ("description", _text(255, blank=False), False, False),
    ("notes", _text(NOTES_MAX_LENGTH, blank=True), False, True),
    ("currency", _currency, False, False),
    ("category_id", _uuid, False, True),
    ("merchant_id", _uuid, False, True),
    ("nature", _nature, False, False),
    ("external_id", _text(255, blank=False), False, True),
    ("source", _text(64, blank=False), False, True),
    ("tag_ids", _uuid_list, False, False),
    ("excluded", _boolean, False, False),
)
_MISSING = object()


def transaction_fields_fast(item: Any) -> dict[str, Any] | None:
    """The validated fields of a well-formed create item, or None: ask the serializer."""
    if type(item) is not dict:
        return None
    out: dict[str, Any] = {}
    try:
        for name, check, required, nullable in _FIELDS:
            value = item.get(name, _MISSING)
            if value is _MISSING:
                if required:
                    return None
                continue
            if value is None:
                if not nullable:
                    return None
                out[name] = None
                continue
            out[name] = check(value)
    except _Unsure:
        return None
    # TransactionFieldsSerializer.validate, for a create
    if "name" not in out and "description" in out:
        out["name"] = out["description"]
    out.pop("description", None)
    if "name" not in out or (out.get("source") and not out.get("external_id")):
        return None
    return out
