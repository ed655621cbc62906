"""Transaction request and response shapes (API document part 4, decisions.md)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from finance.api.errors import flatten_errors
from finance.models import Transaction
from finance.money import format_amount, to_minor_units
from finance.serializers.fast import transaction_fields_fast
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
BULK_MAX_ITEMS = 1000


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


def _tags(txn: Transaction) -> Any:
    """The prefetched tags without building a related manager per row (a third of the cost)."""
    tags = getattr(txn, Transaction.PREFETCHED_TAGS, None)
    return txn.tags.all() if tags is None else tags


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
    rule_ids = serializers.ListField(
        child=serializers.UUIDField(), help_text="the rules that changed this transaction"
    )
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
            "tags": [tag_ref(tag) for tag in _tags(txn)],
            "transfer": transfer_ref(txn),
            "rule_ids": [change["rule"] for change in txn.rule_changes or ()],
            "created_at": iso_utc(txn.created_at),
            "updated_at": iso_utc(txn.updated_at),
        }


class TransactionBulkRequestSerializer(serializers.Serializer):
    """`{"transactions": [...]}`: each item is checked on its own (a bad item fails alone)."""

    transactions = serializers.ListField(
        child=serializers.JSONField(), allow_empty=False, max_length=BULK_MAX_ITEMS
    )

    class Meta:
        ref_name = "TransactionBulkRequest"


class TransactionBulkRequestDocSerializer(serializers.Serializer):
    """What the OpenAPI document shows for the bulk request body."""

    transactions = TransactionFieldsSerializer(many=True, min_length=1, max_length=BULK_MAX_ITEMS)

    class Meta:
        ref_name = "TransactionBulkRequestBody"


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
    to_json = TransactionSerializer().to_representation
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
