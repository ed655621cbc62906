"""Trade, security and holding request and response shapes (API document part 2)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from core.bounds import MAX_QUANTITY
from finance.currencies import minor_units
from finance.money import format_amount
from finance.serializers.fields import (
    NOTES_MAX_LENGTH,
    AmountField,
    CurrencyField,
    StrictDateField,
    UtcDateTimeField,
    envelope,
    iso_utc,
)
from finance.serializers.refs import (
    AccountBriefRefSerializer,
    AccountRefSerializer,
    CategoryBriefRefSerializer,
    account_brief_ref,
    account_ref,
    category_brief_ref,
    ref_function,
)
from trades.models import INVESTMENT_ACTIVITY_LABELS, Holding, Security, SecurityPrice, Trade
from trades.services.trades import TYPES, Entry

QTY_PLACES = 8


def decimal_text(value: Decimal | None, currency: str | None = None) -> str | None:
    """Plain decimal text without trailing zeros, at least the currency's precision."""
    if value is None:
        return None
    text = f"{value.normalize():f}"
    if currency:
        places = minor_units(currency)
        exponent = value.normalize().as_tuple().exponent
        if isinstance(exponent, int) and -exponent < places:
            text = format_amount(value, currency)
    return "0" if text in ("-0", "") else text


# --- requests -------------------------------------------------------------------------------


class TradeCreateFieldsSerializer(serializers.Serializer):
    account_id = serializers.UUIDField()
    date = StrictDateField()
    type = serializers.ChoiceField(choices=TYPES, required=False)
    qty = AmountField(decimal_places=QTY_PLACES, limit=MAX_QUANTITY, required=False)
    price = AmountField(decimal_places=QTY_PLACES, limit=MAX_QUANTITY, required=False)
    amount = AmountField(required=False)
    security_id = serializers.UUIDField(required=False, allow_null=True)
    ticker = serializers.CharField(max_length=64, required=False, allow_blank=True)
    manual_ticker = serializers.CharField(max_length=64, required=False, allow_blank=True)
    currency = CurrencyField(required=False)
    investment_activity_label = serializers.ChoiceField(
        choices=INVESTMENT_ACTIVITY_LABELS, required=False
    )
    category_id = serializers.UUIDField(required=False, allow_null=True)
    transfer_account_id = serializers.UUIDField(required=False, allow_null=True)
    name = serializers.CharField(max_length=255, required=False, allow_blank=False)
    notes = serializers.CharField(
        max_length=NOTES_MAX_LENGTH, required=False, allow_null=True, allow_blank=True
    )

    class Meta:
        ref_name = "TradeCreateFields"


TradeCreateRequestSerializer = envelope(
    "trade", TradeCreateFieldsSerializer(), ref_name="TradeCreate"
)


class TradeUpdateFieldsSerializer(serializers.Serializer):
    date = StrictDateField(required=False)
    qty = AmountField(decimal_places=QTY_PLACES, limit=MAX_QUANTITY, required=False)
    price = AmountField(decimal_places=QTY_PLACES, limit=MAX_QUANTITY, required=False)
    name = serializers.CharField(max_length=255, required=False, allow_blank=False)
    notes = serializers.CharField(
        max_length=NOTES_MAX_LENGTH, required=False, allow_null=True, allow_blank=True
    )
    currency = CurrencyField(required=False)
    investment_activity_label = serializers.ChoiceField(
        choices=INVESTMENT_ACTIVITY_LABELS, required=False
    )
    category_id = serializers.UUIDField(required=False, allow_null=True)

    class Meta:
        ref_name = "TradeUpdateFields"


TradeUpdateRequestSerializer = envelope(
    "trade", TradeUpdateFieldsSerializer(), ref_name="TradeUpdate"
)


# --- responses ------------------------------------------------------------------------------


class SecurityRefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    ticker = serializers.CharField()
    name = serializers.CharField()

    class Meta:
        ref_name = "SecurityRef"


security_ref = ref_function(SecurityRefSerializer)


class TradeCreatedSerializer(serializers.Serializer):
    """The create response of part 2: a Trade, or the Transaction a deposit recorded."""

    id = serializers.UUIDField()
    date = serializers.DateField()
    amount = serializers.CharField()
    currency = serializers.CharField()
    name = serializers.CharField()
    entryable_type = serializers.ChoiceField(choices=["Trade", "Transaction"])
    account = AccountBriefRefSerializer()

    class Meta:
        ref_name = "TradeCreated"
        description = (
            "What a trade create recorded: a trade, or for a deposit or withdrawal a transaction "
            "(`entryable_type` says which)."
        )

    def to_representation(self, entry: Entry) -> dict[str, Any]:
        record = entry.record
        return {
            "id": str(record.id),
            "date": record.date.isoformat(),
            "amount": format_amount(record.amount, record.currency),
            "currency": record.currency,
            "name": record.name,
            "entryable_type": entry.entryable_type,
            "account": account_brief_ref(record.account),
        }


class TradeSerializer(serializers.Serializer):
    """The update response of part 2 (also get and list), plus `kind` and `entryable_type`."""

    id = serializers.UUIDField()
    date = serializers.DateField()
    amount = serializers.CharField()
    currency = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=Trade.Kind.choices)
    entryable_type = serializers.ChoiceField(choices=["Trade"])
    qty = serializers.CharField()
    price = serializers.CharField()
    account = AccountRefSerializer()
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()
    notes = serializers.CharField(allow_null=True)
    investment_activity_label = serializers.ChoiceField(choices=INVESTMENT_ACTIVITY_LABELS)
    security = SecurityRefSerializer(allow_null=True)
    category = CategoryBriefRefSerializer(allow_null=True)

    class Meta:
        ref_name = "Trade"
        description = (
            "A trade. `amount` is its cash flow in the ledger sign: a buy is positive, a sell, "
            "dividend or interest negative. `qty` (negative for a sell) and `price` are plain "
            "decimal text."
        )

    def to_representation(self, trade: Trade) -> dict[str, Any]:
        return {
            "id": str(trade.id),
            "date": trade.date.isoformat(),
            "amount": format_amount(trade.amount, trade.currency),
            "currency": trade.currency,
            "name": trade.name,
            "kind": trade.kind,
            "entryable_type": "Trade",
            "qty": decimal_text(trade.qty),
            "price": decimal_text(trade.price, trade.currency),
            "account": account_ref(trade.account),
            "created_at": iso_utc(trade.created_at),
            "updated_at": iso_utc(trade.updated_at),
            "notes": trade.notes,
            "investment_activity_label": trade.investment_activity_label,
            "security": security_ref(trade.security),
            "category": category_brief_ref(trade.category),
        }


class SecuritySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    ticker = serializers.CharField()
    name = serializers.CharField()
    exchange_mic = serializers.CharField(allow_null=True)
    currency = serializers.CharField(allow_null=True)
    manual = serializers.BooleanField()
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "Security"

    def to_representation(self, security: Security) -> dict[str, Any]:
        return {
            "id": str(security.id),
            "ticker": security.ticker,
            "name": security.name,
            "exchange_mic": security.exchange_mic or None,
            "currency": security.currency,
            "manual": security.manual,
            "created_at": iso_utc(security.created_at),
            "updated_at": iso_utc(security.updated_at),
        }


class HoldingSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    account = AccountBriefRefSerializer()
    security = SecurityRefSerializer()
    qty = serializers.CharField()
    price = serializers.CharField(allow_null=True)
    cost_basis = serializers.CharField(allow_null=True)
    average_cost = serializers.CharField(allow_null=True)
    market_value = serializers.CharField(allow_null=True)
    currency = serializers.CharField()
    date = serializers.DateField()
    source = serializers.ChoiceField(choices=Holding.Source.choices)
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "Holding"

    def to_representation(self, holding: Holding) -> dict[str, Any]:
        currency = holding.currency
        average = None
        if holding.cost_basis is not None and holding.qty:
            average = holding.cost_basis / holding.qty
        return {
            "id": str(holding.id),
            "account": account_brief_ref(holding.account),
            "security": security_ref(holding.security),
            "qty": decimal_text(holding.qty),
            "price": decimal_text(holding.price, currency),
            "cost_basis": _money(holding.cost_basis, currency),
            "average_cost": None
            if average is None
            else decimal_text(average.quantize(Decimal("0.00000001")), currency),
            "market_value": _money(holding.market_value, currency),
            "currency": currency,
            "date": holding.date.isoformat(),
            "source": holding.source,
            "updated_at": iso_utc(holding.updated_at),
        }


def _money(value: Decimal | None, currency: str) -> str | None:
    return None if value is None else format_amount(value, currency)


# --- security prices ------------------------------------------------------------------------


class SecurityPriceFieldsSerializer(serializers.Serializer):
    security_id = serializers.UUIDField()
    date = StrictDateField()
    price = AmountField(decimal_places=QTY_PLACES, limit=MAX_QUANTITY, positive=True)
    currency = CurrencyField(
        required=False,
        help_text="default: the currency of the household's accounts trading the security",
    )

    class Meta:
        ref_name = "SecurityPriceFields"


SecurityPriceRequestSerializer = envelope(
    "security_price", SecurityPriceFieldsSerializer(), ref_name="SecurityPriceCreate"
)


class SecurityPriceSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    security = SecurityRefSerializer()
    date = serializers.DateField()
    price = serializers.CharField()
    currency = serializers.CharField()
    source = serializers.ChoiceField(choices=SecurityPrice.Source.choices)
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "SecurityPrice"

    def to_representation(self, point: SecurityPrice) -> dict[str, Any]:
        return {
            "id": str(point.id),
            "security": security_ref(point.security),
            "date": point.date.isoformat(),
            "price": decimal_text(point.price, point.currency),
            "currency": point.currency,
            "source": point.source,
            "created_at": iso_utc(point.created_at),
            "updated_at": iso_utc(point.updated_at),
        }
