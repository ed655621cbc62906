"""Field types shared by every serializer: strict dates, UTC timestamps, currencies, money."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.bounds import MAX_AMOUNT, amount_problem, date_problem, to_decimal
from core.formats import parse_strict_date
from finance.currencies import is_currency
from finance.money import format_amount, to_minor_units

# Free text with no column limit (transaction and trade notes) is still bounded in a request.
NOTES_MAX_LENGTH = 10_000


# The last instant written and its text: the rows of one write share their timestamps (a
# bulk create's thousand rows one `now`), and strftime was a tenth of its answer.
_last_iso: tuple[dt.datetime | None, str | None] = (None, None)


def iso_utc(value: dt.datetime | None) -> str | None:
    global _last_iso
    if value is None:
        return None
    last = _last_iso
    if last[0] is value:
        return last[1]
    text = value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    _last_iso = (value, text)
    return text


@extend_schema_field(OpenApiTypes.DATE)
class StrictDateField(serializers.Field):
    def __init__(self, *, bounded: bool = True, **kwargs: Any) -> None:
        self.bounded = bounded
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> dt.date:
        try:
            value = parse_strict_date(data)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None
        problem = date_problem(value) if self.bounded else None
        if problem:
            raise serializers.ValidationError(problem)
        return value

    def to_representation(self, value: dt.date) -> str:
        return value.isoformat()


@extend_schema_field(OpenApiTypes.DATETIME)
class UtcDateTimeField(serializers.ReadOnlyField):
    def to_representation(self, value: dt.datetime) -> str | None:
        return iso_utc(value)


@extend_schema_field({"type": "string", "pattern": "^[A-Z]{3}$", "example": "USD"})
class CurrencyField(serializers.CharField):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", 3)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data).upper()
        if not is_currency(value):
            raise serializers.ValidationError(f"{data!r} is not an ISO 4217 currency code")
        return value


@extend_schema_field({"type": "number", "example": 25.5})
class AmountField(serializers.Field):
    """A decimal amount from a JSON number or numeric string; never a float internally."""

    default_error_messages = {"invalid": "must be a number"}

    def __init__(
        self,
        *,
        decimal_places: int = 4,
        positive: bool = False,
        limit: Decimal = MAX_AMOUNT,
        **kwargs: Any,
    ) -> None:
        self.decimal_places = decimal_places
        self.positive = positive
        self.limit = limit
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Decimal:
        value = to_decimal(data)
        if value is None:
            self.fail("invalid")
        problem = amount_problem(value, limit=self.limit)
        if problem:
            raise serializers.ValidationError(problem)
        exponent = value.normalize().as_tuple().exponent
        if isinstance(exponent, int) and -exponent > self.decimal_places:
            raise serializers.ValidationError(
                f"must have at most {self.decimal_places} decimal places"
            )
        if self.positive and value <= 0:
            raise serializers.ValidationError("must be greater than zero")
        return value

    def to_representation(self, value: Decimal) -> str:
        return f"{value:f}"


@extend_schema_field({"type": "string"})
class MoneyTextField(serializers.Field):
    """An amount as a plain decimal string at its currency's precision ("25.00", "1200"),
    read from the object's `amount` and `currency` (decisions.md, Money and signs)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["source"] = "*"
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> str:
        return format_amount(value.amount, value.currency)


@extend_schema_field({"type": "integer"})
class MinorUnitsField(serializers.Field):
    """An amount in integer minor units of its currency (cents), read from the object's
    `amount` and `currency`; `sign` turns the ledger-signed value into the one answered."""

    def __init__(self, *, sign: Any, **kwargs: Any) -> None:
        self.sign = sign
        kwargs["source"] = "*"
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> int:
        return self.sign(to_minor_units(value.amount, value.currency))


class TextChoiceField(serializers.CharField):
    """Text that a service checks against `choices` (its messages word the errors, as for every
    other way in, the admin's included); the OpenAPI document describes it as a ChoiceField of
    those choices (finance/api/schema.py): an enum, named as the same choices elsewhere."""

    def __init__(self, *, choices: Any, **kwargs: Any) -> None:
        # Not `self.choices`: DRF's OPTIONS metadata reads that as a ChoiceField's dict.
        self.documented_choices = choices
        super().__init__(**kwargs)


def envelope(
    root_key: str, fields: serializers.Field, *, ref_name: str
) -> type[serializers.Serializer]:
    """A request body `{root_key: {...}}`: the object under the one key is checked by `fields`
    (a fields serializer, or a field); `ref_name` names the body in the OpenAPI document."""
    meta = type("Meta", (), {"ref_name": ref_name})
    return type(
        f"{ref_name}RequestSerializer", (serializers.Serializer,), {root_key: fields, "Meta": meta}
    )
