"""Transaction request and response shapes (API document part 4, decisions.md)."""

from __future__ import annotations

import operator
from typing import Any

from rest_framework import serializers

from finance.api.errors import flatten_errors
from finance.models import Transaction
from finance.serializers.fast import transaction_fields_fast, transaction_representation
from finance.serializers.fields import (
    NOTES_MAX_LENGTH,
    AmountField,
    CurrencyField,
    MinorUnitsField,
    MoneyTextField,
    StrictDateField,
    UtcDateTimeField,
    envelope,
)
from finance.serializers.refs import (
    AccountRefSerializer,
    CategoryRefSerializer,
    MerchantRefSerializer,
    TagRefSerializer,
    TransferRefSerializer,
)

NATURES = ("income", "expense", "inflow", "outflow")
NAME_OR_DESCRIPTION_REQUIRED = "This field is required (or send description)."
SOURCE_NEEDS_EXTERNAL_ID = "source requires external_id."
BULK_MAX_ITEMS = 1000


class TransactionFieldsSerializer(serializers.Serializer):
    """The fields of the `transaction` object, shared by create and update."""

    account_id = serializers.UUIDField()
    date = StrictDateField()
    amount = AmountField()
    name = serializers.CharField(max_length=255, required=False, allow_blank=False)
    description = serializers.CharField(max_length=255, required=False, allow_blank=False)
    notes = serializers.CharField(
        max_length=NOTES_MAX_LENGTH, required=False, allow_null=True, allow_blank=True
    )
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
        description = (
            "A transaction's fields: under the `transaction` key of a create, or one item of a "
            "bulk create."
        )

    def to_internal_value(self, data: Any) -> Any:
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as exc:
            # Name every missing field at once: the name rule lives in validate(), which DRF
            # only reaches when the fields themselves are valid.
            missing_name = (
                not self.is_update
                and isinstance(data, dict)
                and data.get("name") in (None, "")
                and data.get("description") in (None, "")
            )
            if missing_name and isinstance(exc.detail, dict) and "name" not in exc.detail:
                exc.detail["name"] = [NAME_OR_DESCRIPTION_REQUIRED]
            raise

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "name" not in attrs and "description" in attrs:
            attrs["name"] = attrs["description"]
        attrs.pop("description", None)
        if not self.is_update and "name" not in attrs:
            raise serializers.ValidationError({"name": [NAME_OR_DESCRIPTION_REQUIRED]})
        if attrs.get("source") and not attrs.get("external_id"):
            raise serializers.ValidationError({"source": [SOURCE_NEEDS_EXTERNAL_ID]})
        return attrs


TransactionCreateRequestSerializer = envelope(
    "transaction", TransactionFieldsSerializer(), ref_name="TransactionCreate"
)


class TransactionUpdateFieldsSerializer(TransactionFieldsSerializer):
    """The same fields, none required: only what is sent changes."""

    is_update = True

    class Meta:
        ref_name = "TransactionUpdateFields"
        description = (
            "The fields to change, under the `transaction` key: only what is sent changes."
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


TransactionUpdateRequestSerializer = envelope(
    "transaction", TransactionUpdateFieldsSerializer(), ref_name="TransactionUpdate"
)


class TransactionSerializer(serializers.Serializer):
    """The Transaction of the API document, plus `pending`, `kind`, `excluded` and minor units.

    The fields are the shape (and its OpenAPI schema); the list's hot path answers it through
    `transaction_representation` (finance/serializers/fast.py), which a generated test proves
    equal to DRF's rendering of these fields (tests/finance/test_transaction_shape.py)."""

    id = serializers.UUIDField()
    date = serializers.DateField()
    amount = MoneyTextField()
    amount_cents = MinorUnitsField(sign=abs)
    signed_amount_cents = MinorUnitsField(sign=operator.neg)  # income positive
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
    rule_ids = serializers.ListField(
        child=serializers.UUIDField(), help_text="the rules that changed this transaction"
    )
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        ref_name = "Transaction"
        description = (
            "A transaction. `amount` is a decimal string at the currency's precision, in the "
            "ledger sign: positive is money leaving the account, negative money entering it. "
            "`amount_cents` is its absolute value in minor units, `signed_amount_cents` the "
            "signed one with income positive; `classification` is `income` for money entering, "
            "else `expense`."
        )

    def to_representation(self, txn: Transaction) -> dict[str, Any]:
        return transaction_representation(txn)


class RawItemField(serializers.Field):
    """One bulk item as parsed (JSON numbers with a fraction are already `Decimal`s, which
    JSONField would refuse to re-encode); each item is validated on its own later."""

    def to_internal_value(self, data: Any) -> Any:
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class TransactionBulkRequestSerializer(serializers.Serializer):
    """`{"transactions": [...]}`: each item is checked on its own (a bad item fails alone)."""

    transactions = serializers.ListField(
        child=RawItemField(), allow_empty=False, max_length=BULK_MAX_ITEMS
    )

    class Meta:
        ref_name = "TransactionBulkItems"


class TransactionBulkRequestDocSerializer(serializers.Serializer):
    """What the OpenAPI document shows for the bulk request body."""

    transactions = TransactionFieldsSerializer(many=True, min_length=1, max_length=BULK_MAX_ITEMS)

    class Meta:
        ref_name = "TransactionBulk"


def transaction_bulk_items_validate(items: list[Any]) -> list[dict[str, Any] | list[str]]:
    """Each item's validated fields, or its "field: problem" messages (single-create rules).

    A well-formed item takes the fast path (finance/serializers/fast.py); any other goes
    through one field set, built once and reused, as DRF's ListSerializer does."""
    checker = TransactionFieldsSerializer()
    out: list[dict[str, Any] | list[str]] = []
    for item in items:
        fast = transaction_fields_fast(item)
        if fast is not None:
            out.append(fast)
            continue
        try:
            out.append(checker.run_validation(item))
        except serializers.ValidationError as exc:
            out.append(flatten_errors(exc.detail))
    return out


class TransactionBulkResultSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    status = serializers.ChoiceField(choices=[201, 200, 422])
    transaction = TransactionSerializer(allow_null=True)
    errors = serializers.ListField(child=serializers.CharField(), allow_null=True)

    class Meta:
        ref_name = "TransactionBulkResult"


class TransactionBulkSummarySerializer(serializers.Serializer):
    created = serializers.IntegerField()
    existing = serializers.IntegerField()
    failed = serializers.IntegerField()

    class Meta:
        ref_name = "TransactionBulkSummary"


class TransactionBulkResponseSerializer(serializers.Serializer):
    results = TransactionBulkResultSerializer(many=True)
    summary = TransactionBulkSummarySerializer()

    class Meta:
        ref_name = "TransactionBulkResponse"


def transaction_bulk_response(results: list[Any], loaded: dict[Any, Transaction]) -> dict[str, Any]:
    """The bulk body: one result per item in order, then the counts."""
    out = []
    counts = {"created": 0, "existing": 0, "failed": 0}
    to_json = transaction_representation
    for result in results:
        txn = loaded.get(result.transaction.pk) if result.transaction is not None else None
        out.append(
            {
                "index": result.index,
                "status": result.status,
                "transaction": to_json(txn) if txn is not None else None,
                "errors": result.errors,
            }
        )
        counts[{201: "created", 200: "existing"}.get(result.status, "failed")] += 1
    return {"results": out, "summary": counts}
