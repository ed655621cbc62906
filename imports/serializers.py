"""Import, row and mapping bodies. Representations are built by plain functions (one place each);
the serializer classes describe them for OpenAPI and validate request bodies."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from finance.money import format_amount
from finance.serializers.fields import TextChoiceField, iso_utc
from imports.models import Import, ImportMapping, ImportRow
from imports.parsing.csvfile import SEPARATORS
from imports.parsing.dates import DATE_FORMATS
from imports.parsing.numbers import NUMBER_FORMATS
from imports.services.config import CONFIG_KEYS, SET_BALANCE, SIGNAGE
from imports.services.progress import progress_read

STAT_KEYS = (
    "rows_count",
    "valid_rows_count",
    "invalid_rows_count",
    "mappings_count",
    "unassigned_mappings_count",
    "duplicates_count",
    "skipped_rows_count",
    "rows_processed",
)
READBACK_STATUSES = ("not_verified", "matched", "mismatch", "failed", "reverted")
# The configuration options with a closed set of values (the others name file columns);
# an empty `col_sep` asks for the separator to be detected.
OPTION_VALUES: dict[str, tuple[str, ...]] = {
    "date_format": DATE_FORMATS,
    "number_format": tuple(NUMBER_FORMATS),
    "signage_convention": SIGNAGE,
    "col_sep": ("", *SEPARATORS),
    "set_balance": SET_BALANCE,
}
# The readback's object fields are objects from the start ({} before a verification), as in
# the reference schema; checked_at and error are null until a check sets them.
READBACK_OBJECTS = (
    "expected_record_counts",
    "before_counts",
    "after_counts",
    "actual_delta_counts",
    "checked_counts",
    "mismatches",
)
READBACK_VALUES = ("checked_at", "error")
READBACK_LISTS = ("statements",)


def import_representation(imp: Import) -> dict[str, Any]:
    stats = imp.stats or {}
    configured = bool(stats.get("rows_count"))
    cleaned = configured and not stats.get("invalid_rows_count")
    processed = imp.rows_processed
    if imp.status == Import.Status.IMPORTING or imp.parsing:
        processed = progress_read(imp.pk) or 0
    verification = imp.verification or {}
    readback = verification.get("readback") or {}
    return {
        "id": str(imp.pk),
        "type": imp.type,
        "status": imp.status,
        "created_at": iso_utc(imp.created_at),
        "updated_at": iso_utc(imp.updated_at),
        "status_detail": {
            "uploaded": imp.uploaded,
            "configured": configured,
            "terminal": imp.status in Import.TERMINAL,
            "cleaned": cleaned,
            "publishable": cleaned
            and not stats.get("unassigned_account_mappings")
            and imp.status in Import.PUBLISHABLE_FROM,
            "revertable": imp.status in Import.REVERTABLE_FROM,
        },
        "configuration": {key: str(imp.configuration.get(key, "")) for key in CONFIG_KEYS},
        "stats": {
            **{key: int(stats.get(key) or 0) for key in STAT_KEYS},
            "rows_processed": processed,
        },
        "account_id": str(imp.account_id) if imp.account_id else None,
        "error": imp.error or None,
        "file_name": imp.original_filename or None,
        "encoding": imp.encoding or None,
        "parsing": imp.parsing,
        "reported_balances": [
            {
                "account_id": change["account_id"],
                "balance": format_amount(Decimal(change["balance"]), change["currency"]),
                "as_of": change["at"][:10],
                "statement": change["statement"],
            }
            for change in imp.balances_set or []
        ],
        "verification": {
            "expected_record_counts": verification.get("expected_record_counts") or {},
            "readback": {
                "status": readback.get("status", "not_verified"),
                **{key: readback.get(key) for key in READBACK_VALUES},
                **{key: readback.get(key) or {} for key in READBACK_OBJECTS},
                **{key: readback.get(key) or [] for key in READBACK_LISTS},
            },
        },
    }


def row_representation(
    row: ImportRow, imp: Import, targets: dict[tuple[str, str], str | None]
) -> dict[str, Any]:
    headers = imp.headers or []
    raw = {
        (headers[i] if i < len(headers) else f"column_{i + 1}"): value
        for i, value in enumerate(row.raw or [])
    }
    return {
        "row_number": row.row_number,
        "valid": row.valid,
        "errors": row.errors or [],
        "duplicate": row.duplicate,
        "duplicate_of": str(row.duplicate_of) if row.duplicate_of else None,
        "forced": row.forced,
        "skipped": row.skipped,
        "fingerprint": row.fingerprint or None,
        "occurrence": row.occurrence,
        "transaction_id": str(row.transaction_id) if row.transaction_id else None,
        "raw": raw,
        "date": row.date.isoformat() if row.date else None,
        "amount": format_amount(row.amount, row.currency)
        if row.amount is not None and row.currency
        else None,
        "currency": row.currency or None,
        "name": row.name or None,
        "category": row.category or None,
        "tags": row.tags or [],
        "notes": row.notes or None,
        "account": row.account_value or None,
        "mapping": {
            "account_id": str(row.account_id) if row.account_id else None,
            "category_id": targets.get(("category", row.category)) if row.category else None,
            "tag_ids": [t for t in (targets.get(("tag", tag)) for tag in row.tags or []) if t],
        },
    }


def mapping_representation(m: ImportMapping) -> dict[str, Any]:
    target = m.target_id or m.created_id
    return {
        "id": str(m.pk),
        "kind": m.kind,
        "value": m.value,
        "target_id": str(target) if target else None,
        "create_new": m.create_new,
        "created_by_import": m.created_id is not None,
        "resolved": m.resolved or m.kind != "account",
        "rows_count": m.rows_count,
    }


# --- OpenAPI description of the bodies above ------------------------------------------------


def _ints(keys: tuple[str, ...] | list[str], name: str) -> type[serializers.Serializer]:
    return type(name, (serializers.Serializer,), {k: serializers.IntegerField() for k in keys})


class StatusDetailSerializer(serializers.Serializer):
    uploaded = serializers.BooleanField()
    configured = serializers.BooleanField()
    terminal = serializers.BooleanField()
    cleaned = serializers.BooleanField()
    publishable = serializers.BooleanField()
    revertable = serializers.BooleanField()

    class Meta:
        ref_name = "ImportStatusDetail"


ConfigurationSerializer = type(
    "ImportConfiguration",
    (serializers.Serializer,),
    {k: serializers.CharField(allow_blank=True) for k in CONFIG_KEYS},
)
ImportStatsSerializer = _ints(STAT_KEYS, "ImportStats")


class StatementCheckSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    account = serializers.CharField()
    account_id = serializers.UUIDField(allow_null=True)
    currency = serializers.CharField()
    opening_balance = serializers.CharField(allow_null=True)
    closing_balance = serializers.CharField(allow_null=True)
    closing_date = serializers.DateField(allow_null=True)
    entries = serializers.IntegerField()
    entries_total = serializers.CharField(help_text="in the file's sign: money in is positive")
    computed_closing = serializers.CharField(allow_null=True)
    status = serializers.CharField(help_text="matched, mismatch, or unchecked (no balances)")


class ReadbackSerializer(serializers.Serializer):
    status = TextChoiceField(choices=READBACK_STATUSES)
    checked_at = serializers.CharField(allow_null=True)
    expected_record_counts = serializers.DictField(child=serializers.IntegerField())
    before_counts = serializers.DictField(child=serializers.IntegerField())
    after_counts = serializers.DictField(child=serializers.IntegerField())
    actual_delta_counts = serializers.DictField(child=serializers.IntegerField())
    checked_counts = serializers.DictField(child=serializers.IntegerField())
    mismatches = serializers.DictField()
    error = serializers.CharField(allow_null=True)
    statements = StatementCheckSerializer(
        many=True,
        allow_null=True,
        help_text="statement files: each statement's opening balance plus its entries as "
        "published, against its closing balance",
    )

    class Meta:
        ref_name = "ImportReadback"


class VerificationSerializer(serializers.Serializer):
    expected_record_counts = serializers.DictField(child=serializers.IntegerField())
    readback = ReadbackSerializer()

    class Meta:
        ref_name = "ImportVerification"


class ReportedBalanceSerializer(serializers.Serializer):
    account_id = serializers.UUIDField()
    balance = serializers.CharField()
    as_of = serializers.DateField()
    statement = serializers.IntegerField()


class ImportSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    # Inline enums: components named after `type` and `status` would collide with other
    # resources'.
    type = TextChoiceField(choices=Import.Type.choices)
    status = TextChoiceField(choices=Import.Status.choices)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    status_detail = StatusDetailSerializer()
    configuration = ConfigurationSerializer()
    stats = ImportStatsSerializer()
    account_id = serializers.UUIDField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    file_name = serializers.CharField(allow_null=True)
    encoding = serializers.CharField(allow_null=True)
    parsing = serializers.BooleanField()
    reported_balances = ReportedBalanceSerializer(
        many=True,
        help_text="statement files: the closing balances this import set as its accounts' "
        "reported balances (set_balance); a revert puts the previous ones back",
    )
    verification = VerificationSerializer()

    class Meta:
        ref_name = "Import"


class MetaSerializer(serializers.Serializer):
    page = serializers.IntegerField()
    per_page = serializers.IntegerField()
    total_count = serializers.IntegerField()
    total_pages = serializers.IntegerField()

    class Meta:
        ref_name = "PageMeta"


class ImportEnvelopeSerializer(serializers.Serializer):
    data = ImportSerializer()

    class Meta:
        ref_name = "ImportEnvelope"


@extend_schema_serializer(many=False)
class ImportListSerializer(serializers.Serializer):
    data = ImportSerializer(many=True)
    meta = MetaSerializer()


class RowMappingSerializer(serializers.Serializer):
    account_id = serializers.UUIDField(allow_null=True)
    category_id = serializers.UUIDField(allow_null=True)
    tag_ids = serializers.ListField(child=serializers.UUIDField())

    class Meta:
        ref_name = "ImportRowMapping"


class ImportRowSerializer(serializers.Serializer):
    row_number = serializers.IntegerField()
    valid = serializers.BooleanField()
    errors = serializers.ListField(child=serializers.CharField())
    duplicate = serializers.BooleanField()
    duplicate_of = serializers.UUIDField(allow_null=True)
    forced = serializers.BooleanField()
    skipped = serializers.BooleanField()
    fingerprint = serializers.CharField(allow_null=True)
    occurrence = serializers.IntegerField()
    transaction_id = serializers.UUIDField(allow_null=True)
    raw = serializers.DictField(child=serializers.CharField(allow_blank=True))
    date = serializers.DateField(allow_null=True)
    amount = serializers.CharField(allow_null=True)
    currency = serializers.CharField(allow_null=True)
    name = serializers.CharField(allow_null=True)
    category = serializers.CharField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())
    notes = serializers.CharField(allow_null=True)
    account = serializers.CharField(allow_null=True)
    mapping = RowMappingSerializer()


@extend_schema_serializer(many=False)
class ImportRowListSerializer(serializers.Serializer):
    data = ImportRowSerializer(many=True)
    meta = MetaSerializer()


class ImportRowEnvelopeSerializer(serializers.Serializer):
    data = ImportRowSerializer()

    class Meta:
        ref_name = "ImportRowEnvelope"


class MappingKindField(serializers.ChoiceField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(ImportMapping.Kind.choices, **kwargs)


class ImportMappingSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    kind = MappingKindField()
    value = serializers.CharField()
    target_id = serializers.UUIDField(allow_null=True)
    create_new = serializers.BooleanField()
    created_by_import = serializers.BooleanField()
    resolved = serializers.BooleanField()
    rows_count = serializers.IntegerField()


@extend_schema_serializer(many=False)
class ImportMappingListSerializer(serializers.Serializer):
    data = ImportMappingSerializer(many=True)
    meta = MetaSerializer()
