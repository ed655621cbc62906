"""Field types shared by every serializer: strict dates, UTC timestamps, currencies, money."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from finance.currencies import is_currency

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_AMOUNT = Decimal("999999999999999.9999")
# Free text with no column limit (transaction and trade notes) is still bounded in a request.
NOTES_MAX_LENGTH = 10_000


def iso_utc(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_strict_date(value: Any) -> dt.date:
    """`YYYY-MM-DD` only. Raises ValueError with a message fit for a user."""
    if not isinstance(value, str) or not _DATE_RE.match(value):
        raise ValueError("must be a date in YYYY-MM-DD format")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError("is not a valid calendar date") from None


@extend_schema_field(OpenApiTypes.DATE)
class StrictDateField(serializers.Field):
    def to_internal_value(self, data: Any) -> dt.date:
        try:
            return parse_strict_date(data)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

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

    def __init__(self, *, decimal_places: int = 4, positive: bool = False, **kwargs: Any) -> None:
        self.decimal_places = decimal_places
        self.positive = positive
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Decimal:
        if isinstance(data, bool) or not isinstance(data, (int, float, Decimal, str)):
            self.fail("invalid")
        try:
            value = Decimal(str(data).strip())
        except (InvalidOperation, ValueError):
            self.fail("invalid")
        if not value.is_finite():
            self.fail("invalid")
        if abs(value) > MAX_AMOUNT:
            raise serializers.ValidationError("is too large")
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
