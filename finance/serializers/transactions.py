"""Transaction request and response shapes (API document part 4, decisions.md)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from finance.models import Transaction
from finance.money import format_amount, to_minor_units
from finance.serializers.fields import (
    AmountField,
    CurrencyField,
    StrictDateField,
    UtcDateTimeField,
    iso_utc,
)
from finance.serializers.refs import (
    AccountRefSerializer,
    CategoryRefSerializer,
    MerchantRefSerializer,
    TagRefSerializer,
    TransferRefSerializer,
    account_ref,
    category_ref,
    merchant_ref,
    tag_ref,
    transfer_ref,
)

NATURES = ("income", "expense", "inflow", "outflow")
NAME_OR_DESCRIPTION_REQUIRED = "This field is required (or send description)."
SOURCE_NEEDS_EXTERNAL_ID = "source requires external_id."


class TransactionFieldsSerializer(serializers.Serializer):
    """The fields of the `transaction` object, shared by create and update."""

    account_id = serializers.UUIDField()
    date = StrictDateField()
    amount = AmountField()
    name = serializers.CharField(max_length=255, required=False, allow_blank=False)
    description = serializers.CharField(max_length=255, required=False, allow_blank=False)
    notes = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    currency = CurrencyField(required=False)
    category_id = serializers.UUIDField(required=False, allow_null=True)
    merchant_id = serializers.UUIDField(required=False, allow_null=True)
    nature = serializers.ChoiceField(choices=NATURES, required=False)
    external_id = serializers.CharField(max_length=255, required=False, allow_null=True)
    source = serializers.CharField(max_length=64, required=False, allow_null=True)
    tag_ids = serializers.ListField(child=serializers.UUIDField(), required=False, max_length=100)
    excluded = serializers.BooleanField(required=False)

    is_update = False

    class Meta:
        ref_name = "TransactionFields"

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "name" not in attrs and "description" in attrs:
            attrs["name"] = attrs["description"]
        attrs.pop("description", None)
        if not self.is_update and "name" not in attrs:
            raise serializers.ValidationError({"name": [NAME_OR_DESCRIPTION_REQUIRED]})
        if attrs.get("source") and not attrs.get("external_id"):
            raise serializers.ValidationError({"source": [SOURCE_NEEDS_EXTERNAL_ID]})
        return attrs


class TransactionCreateRequestSerializer(serializers.Serializer):
    transaction = TransactionFieldsSerializer()

    class Meta:
        ref_name = "TransactionCreateRequest"


class TransactionUpdateFieldsSerializer(TransactionFieldsSerializer):
    """The same fields, none required: only what is sent changes."""

    is_update = True

    class Meta:
        ref_name = "TransactionUpdateFields"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


class TransactionUpdateRequestSerializer(serializers.Serializer):
    transaction = TransactionUpdateFieldsSerializer()

    class Meta:
        ref_name = "TransactionUpdateRequest"


class TransactionSerializer(serializers.Serializer):
    """The Transaction of the API document, plus `pending`, `kind`, `excluded` and minor units.

    `to_representation` is written out by hand: it is the hottest path of the list endpoint."""

    id = serializers.UUIDField()
    date = serializers.DateField()
    amount = serializers.CharField()
    amount_cents = serializers.IntegerField()
    signed_amount_cents = serializers.IntegerField()
    currency = serializers.CharField()
    name = serializers.CharField()
    notes = serializers.CharField(allow_null=True)
    external_id = serializers.CharField(allow_null=True)
    source = serializers.CharField(allow_null=True)
    classification = serializers.ChoiceField(choices=["income", "expense"])
    kind = serializers.ChoiceField(choices=Transaction.Kind.choices)
    pending = serializers.BooleanField()
    excluded = serializers.BooleanField()
    account = AccountRefSerializer()
    category = CategoryRefSerializer(allow_null=True)
    merchant = MerchantRefSerializer(allow_null=True)
    tags = TagRefSerializer(many=True)
    transfer = TransferRefSerializer(allow_null=True)
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "Transaction"

    def to_representation(self, txn: Transaction) -> dict[str, Any]:
        cents = to_minor_units(txn.amount, txn.currency)
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
            "tags": [tag_ref(tag) for tag in txn.tags.all()],
            "transfer": transfer_ref(txn),
            "created_at": iso_utc(txn.created_at),
            "updated_at": iso_utc(txn.updated_at),
        }
