"""Fast paths for the two transaction shapes the API handles most: the fields of one item of
a bulk request, and the transaction that lists and writes answer.

DRF's field machinery is a large share of a bulk request's and a list page's cost
(bench/README.md), so each shape is also written out by hand here, and a generated test holds
it to the serializer's declaration, which stays the one statement of the shape:

- `transaction_fields_fast` checks the common, well-formed shape of an item directly and
  returns exactly what `TransactionFieldsSerializer().run_validation(item)` returns for it;
  anything it is not sure of (a wrong type, a blank, a value out of range, a rule that would
  fail) answers None, and the item goes through the serializer, which then also words the
  errors (tests/finance/test_bulk_fast_path.py: whatever this accepts, the serializer accepts
  with the same result).
- `transaction_representation` equals DRF's rendering of TransactionSerializer's declared
  fields for every combination of relations, tags, transfers and currency precisions
  (tests/finance/test_transaction_shape.py)."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from rest_framework import serializers

from core.bounds import date_problem
from finance.currencies import is_currency
from finance.models import Transaction
from finance.money import format_amount, to_minor_units
from finance.serializers.fields import NOTES_MAX_LENGTH, AmountField, iso_utc, parse_strict_date
from finance.serializers.refs import (
    account_ref,
    category_ref,
    merchant_ref,
    tag_ref,
    transaction_tags,
    transfer_side,
)

_AMOUNT = AmountField()


class _Unsure(Exception):
    """The fast path cannot vouch for this value: let the serializer decide."""


# A bulk's items repeat the same few ids, days and amounts: each distinct text is parsed once
# per process (the results are immutable; a text that fails is not remembered).
_SEEN = 4096


@functools.lru_cache(maxsize=_SEEN)
def _uuid_of(text: str) -> uuid.UUID:
    return uuid.UUID(hex=text)


@functools.lru_cache(maxsize=_SEEN)
def _day_of(text: str) -> Any:
    day = parse_strict_date(text)
    if date_problem(day):
        raise ValueError(day)
    return day


@functools.lru_cache(maxsize=_SEEN)
def _amount_of(text: str) -> Any:
    return _AMOUNT.to_internal_value(text)


def _uuid(value: Any) -> uuid.UUID:
    if type(value) is not str:
        raise _Unsure
    try:
        return _uuid_of(value)
    except ValueError:
        raise _Unsure from None


def _date(value: Any) -> Any:
    if type(value) is not str:
        raise _Unsure
    try:
        return _day_of(value)
    except ValueError:
        raise _Unsure from None


def _amount(value: Any) -> Any:
    if type(value) not in (str, int, Decimal):
        raise _Unsure
    try:
        return _amount_of(value) if type(value) is str else _AMOUNT.to_internal_value(value)
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


def transaction_representation(txn: Transaction) -> dict[str, Any]:
    """TransactionSerializer's shape of one transaction: the hottest path of the list."""
    cents = to_minor_units(txn.amount, txn.currency)
    side = transfer_side(txn)
    return {
        "id": str(txn.id),
        "date": txn.date.isoformat(),
        "amount": format_amount(txn.amount, txn.currency),
        "amount_cents": abs(cents),
        "signed_amount_cents": -cents,
        "currency": txn.currency,
        "name": txn.name,
        "notes": txn.notes,
        "external_id": txn.external_id,
        "source": txn.source,
        "classification": txn.classification,
        "kind": txn.kind,
        "pending": txn.pending,
        "excluded": txn.excluded,
        "account": account_ref(txn.account),
        "category": category_ref(txn.category),
        "merchant": merchant_ref(txn.merchant),
        "tags": [tag_ref(tag) for tag in transaction_tags(txn)],
        "transfer": None
        if side is None
        else {
            "id": str(side.id),
            "amount": format_amount(side.amount, side.currency),
            "currency": side.currency,
            "status": side.status,
            "other_account": account_ref(side.other_account),
        },
        "rule_ids": txn.rule_ids,
        "created_at": iso_utc(txn.created_at),
        "updated_at": iso_utc(txn.updated_at),
    }
