"""Accounts, categories, merchants and tags: request bodies (under a root key) and responses."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from finance.models import Account, Category, Merchant, Tag
from finance.money import format_amount, quantize, subtract
from finance.serializers.fields import (
    AmountField,
    CurrencyField,
    StrictDateField,
    UtcDateTimeField,
    envelope,
    iso_utc,
)

COLOR_FORMAT = "must be a color in #RRGGBB format"
COLOR_RE = r"^#[0-9A-Fa-f]{6}$"


def color_field(**kwargs: Any) -> serializers.RegexField:
    return serializers.RegexField(COLOR_RE, error_messages={"invalid": COLOR_FORMAT}, **kwargs)


class _AllOptional:
    """Update bodies: the same fields, none required; only what is sent changes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


# --- accounts ---------------------------------------------------------------------------


class AccountFieldsSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255)
    account_type = serializers.ChoiceField(choices=Account.Type.choices, required=False)
    status = serializers.ChoiceField(choices=Account.Status.choices, required=False)
    currency = CurrencyField(required=False)
    institution_name = serializers.CharField(
        max_length=255, required=False, allow_blank=True, allow_null=True
    )
    balance = AmountField(
        required=False,
        allow_null=True,
        help_text="opening balance of a manual account, as of balance_date",
    )
    balance_date = StrictDateField(
        required=False, help_text="YYYY-MM-DD; the opening balance's day (default today)"
    )

    class Meta:
        ref_name = "AccountFields"


class AccountUpdateFieldsSerializer(_AllOptional, AccountFieldsSerializer):
    class Meta:
        ref_name = "AccountUpdateFields"


AccountCreateRequestSerializer = envelope(
    "account", AccountFieldsSerializer(), ref_name="AccountCreate"
)
AccountUpdateRequestSerializer = envelope(
    "account", AccountUpdateFieldsSerializer(), ref_name="AccountUpdate"
)


class AccountSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    account_type = serializers.ChoiceField(choices=Account.Type.choices)
    status = serializers.ChoiceField(choices=Account.Status.choices)
    currency = serializers.CharField()
    balance = serializers.CharField(
        help_text="decimal string at the currency's precision; for investment and crypto "
        "accounts the value: cash_balance + holdings_value"
    )
    cash_balance = serializers.CharField(
        allow_null=True,
        help_text="investment and crypto accounts: the cash (balance - holdings_value); "
        "null for other accounts",
    )
    holdings_value = serializers.CharField(
        allow_null=True,
        help_text="investment and crypto accounts: the market value of the holdings in the "
        "account's currency; null for other accounts",
    )
    classification = serializers.ChoiceField(choices=["asset", "liability"])
    institution_name = serializers.CharField(allow_null=True)
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "Account"

    def to_representation(self, account: Account) -> dict[str, Any]:
        balance = quantize(Decimal(account.balance), account.currency)
        cash = holdings = None
        if account.account_type in Account.TRADING_TYPES:
            # Each rounded to the currency, cash as their difference: the three always add up.
            value = quantize(Decimal(account.holdings_value or 0), account.currency)
            cash = format_amount(subtract(balance, value), account.currency)
            holdings = format_amount(value, account.currency)
        return {
            "id": str(account.id),
            "name": account.name,
            "account_type": account.account_type,
            "status": account.status,
            "currency": account.currency,
            "balance": format_amount(balance, account.currency),
            "cash_balance": cash,
            "holdings_value": holdings,
            "classification": account.classification,
            "institution_name": account.institution_name or None,
            "created_at": iso_utc(account.created_at),
            "updated_at": iso_utc(account.updated_at),
        }


class BalanceSerializer(serializers.Serializer):
    date = serializers.DateField()
    balance = serializers.CharField()
    currency = serializers.CharField()

    class Meta:
        ref_name = "AccountBalance"


class BalanceSeriesSerializer(serializers.Serializer):
    account_id = serializers.UUIDField()
    currency = serializers.CharField()
    start_date = serializers.DateField()
    end_date = serializers.DateField()
    balances = BalanceSerializer(many=True)

    class Meta:
        ref_name = "AccountBalanceSeries"


# --- categories ---------------------------------------------------------------------------


class CategoryFieldsSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255)
    color = color_field(required=False)
    icon = serializers.CharField(max_length=64, required=False, allow_blank=True)
    parent_id = serializers.UUIDField(required=False, allow_null=True)

    class Meta:
        ref_name = "CategoryFields"


class CategoryUpdateFieldsSerializer(_AllOptional, CategoryFieldsSerializer):
    class Meta:
        ref_name = "CategoryUpdateFields"


CategoryCreateRequestSerializer = envelope(
    "category", CategoryFieldsSerializer(), ref_name="CategoryCreate"
)
CategoryUpdateRequestSerializer = envelope(
    "category", CategoryUpdateFieldsSerializer(), ref_name="CategoryUpdate"
)


class CategorySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    color = serializers.CharField()
    icon = serializers.CharField()
    parent_id = serializers.UUIDField(allow_null=True)
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "Category"

    def to_representation(self, category: Category) -> dict[str, Any]:
        return {
            "id": str(category.id),
            "name": category.name,
            "color": category.color,
            "icon": category.icon,
            "parent_id": str(category.parent_id) if category.parent_id else None,
            "created_at": iso_utc(category.created_at),
            "updated_at": iso_utc(category.updated_at),
        }


# --- merchants ---------------------------------------------------------------------------


class MerchantFieldsSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255)

    class Meta:
        ref_name = "MerchantFields"


class MerchantUpdateFieldsSerializer(_AllOptional, MerchantFieldsSerializer):
    class Meta:
        ref_name = "MerchantUpdateFields"


MerchantCreateRequestSerializer = envelope(
    "merchant", MerchantFieldsSerializer(), ref_name="MerchantCreate"
)
MerchantUpdateRequestSerializer = envelope(
    "merchant", MerchantUpdateFieldsSerializer(), ref_name="MerchantUpdate"
)


class MerchantSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "Merchant"

    def to_representation(self, merchant: Merchant) -> dict[str, Any]:
        return {
            "id": str(merchant.id),
            "name": merchant.name,
            "created_at": iso_utc(merchant.created_at),
            "updated_at": iso_utc(merchant.updated_at),
        }


# --- tags ---------------------------------------------------------------------------------


class TagFieldsSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255)
    color = color_field(required=False)

    class Meta:
        ref_name = "TagFields"


class TagUpdateFieldsSerializer(_AllOptional, TagFieldsSerializer):
    class Meta:
        ref_name = "TagUpdateFields"


TagCreateRequestSerializer = envelope("tag", TagFieldsSerializer(), ref_name="TagCreate")
TagUpdateRequestSerializer = envelope("tag", TagUpdateFieldsSerializer(), ref_name="TagUpdate")


class TagSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    color = serializers.CharField()
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "Tag"

    def to_representation(self, tag: Tag) -> dict[str, Any]:
        return {
            "id": str(tag.id),
            "name": tag.name,
            "color": tag.color,
            "created_at": iso_utc(tag.created_at),
            "updated_at": iso_utc(tag.updated_at),
        }
