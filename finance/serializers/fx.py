"""Exchange rates, net worth and cash flow: request bodies and response shapes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from finance.fx.bounds import RATE_MESSAGE, rate_parse
from finance.models import ExchangeRate
from finance.serializers.fields import CurrencyField, StrictDateField, UtcDateTimeField, envelope

SAME_CURRENCY = "must differ from from_currency (a currency is 1 of itself)"


@extend_schema_field({"type": "number", "example": 1.0866})
class RateInputField(serializers.Field):
    """A rate from a JSON number or numeric string, read exactly (never through a float)."""

    def to_internal_value(self, data: Any) -> Decimal:
        rate = rate_parse(data)
        if rate is None:
            raise serializers.ValidationError(RATE_MESSAGE)
        return rate


@extend_schema_field({"type": "string", "example": "1.0866"})
class RateField(serializers.Field):
    """A stored rate as plain decimal text."""

    def to_representation(self, value: Decimal) -> str:
        return rate_text(value)


def rate_text(value: Decimal) -> str:
    """The rate without trailing zeros: "1.0866", "162.5", "100"."""
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


class ExchangeRateFieldsSerializer(serializers.Serializer):
    date = StrictDateField()
    from_currency = CurrencyField()
    to_currency = CurrencyField()
    rate = RateInputField(help_text="units of to_currency for 1 from_currency")

    class Meta:
        ref_name = "ExchangeRateFields"

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["from_currency"] == attrs["to_currency"]:
            raise serializers.ValidationError({"to_currency": SAME_CURRENCY})
        return attrs


ExchangeRateCreateRequestSerializer = envelope(
    "exchange_rate", ExchangeRateFieldsSerializer(), ref_name="ExchangeRateCreate"
)


class ExchangeRateSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    date = StrictDateField()
    from_currency = serializers.CharField()
    to_currency = serializers.CharField()
    rate = RateField(help_text="units of to_currency for 1 from_currency")
    source = serializers.ChoiceField(
        choices=list(ExchangeRate.SOURCES),
        help_text="household: the household's own rate (preferred); ecb: a system rate from "
        "the European Central Bank; manual: a system rate an operator entered",
    )
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "ExchangeRate"


def _money(help_text: str = "decimal string at the currency's precision") -> serializers.Field:
    return serializers.CharField(help_text=help_text)


class MissingRateSerializer(serializers.Serializer):
    currency = serializers.CharField()
    date = serializers.DateField(help_text="the latest day of the range without a usable rate")

    class Meta:
        ref_name = "MissingRate"


class NetWorthDaySerializer(serializers.Serializer):
    date = serializers.DateField()
    assets = _money()
    liabilities = _money("what is owed, positive; decimal string at the currency's precision")
    net_worth = _money()

    class Meta:
        ref_name = "NetWorthDay"


class NetWorthAccountSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    currency = serializers.CharField()
    balance = _money("on end_date, in the account's currency")
    converted_balance = serializers.CharField(
        allow_null=True, help_text="in the asked currency; null when no usable rate"
    )

    class Meta:
        ref_name = "NetWorthAccount"


class NetWorthSerializer(serializers.Serializer):
    currency = serializers.CharField()
    series = NetWorthDaySerializer(many=True)
    accounts = NetWorthAccountSerializer(many=True)
    missing_rates = MissingRateSerializer(many=True)

    class Meta:
        ref_name = "NetWorth"


class CashFlowCategorySerializer(serializers.Serializer):
    category_id = serializers.UUIDField(allow_null=True)
    name = serializers.CharField()
    income = _money()
    expense = _money()

    class Meta:
        ref_name = "CashFlowCategory"


class CashFlowPeriodSerializer(serializers.Serializer):
    start_date = serializers.DateField()
    end_date = serializers.DateField()
    income = _money()
    expense = _money()
    net = _money()
    categories = CashFlowCategorySerializer(many=True)

    class Meta:
        ref_name = "CashFlowPeriod"


class CashFlowSerializer(serializers.Serializer):
    currency = serializers.CharField()
    periods = CashFlowPeriodSerializer(many=True)
    missing_rates = MissingRateSerializer(many=True)

    class Meta:
        ref_name = "CashFlow"
