"""Reads of imports, rows and mappings, scoped to a household."""

from __future__ import annotations

from django.db.models import Case, OuterRef, QuerySet, Subquery, UUIDField, When

from core.filters import QueryFilters
from finance.models import Family, Transaction
from imports.models import Import, ImportMapping, ImportRow
from imports.services.formats import import_source
from imports.services.stats import TO_CREATE


def import_list(*, family: Family, params: object) -> QuerySet[Import]:
    filters = QueryFilters(params)
    status = filters.choice("status", Import.Status.values)
    kind = filters.choice("type", Import.Type.values)
    filters.check()
    qs = Import.objects.filter(family=family)
    if status:
        qs = qs.filter(status=status)
    if kind:
        qs = qs.filter(type=kind)
    return qs.order_by("-created_at", "-id")


def import_row_list(*, data_import: Import, params: object) -> QuerySet[ImportRow]:
    filters = QueryFilters(params)
    valid = filters.boolean("valid")
    duplicate = filters.boolean("duplicate")
    filters.check()
    qs = with_transaction_ids(ImportRow.objects.filter(data_import=data_import), data_import)
    if valid is not None:
        qs = qs.filter(valid=valid)
    if duplicate is not None:
        qs = qs.filter(duplicate=duplicate)
    return qs.order_by("row_number")


def with_transaction_ids(rows: QuerySet[ImportRow], data_import: Import) -> QuerySet[ImportRow]:
    """Rows with `transaction_id`: the transaction the row became when this import published
    it (its account, the import source and the row's fingerprint as external id: unique), or
    None (not published, reverted, a duplicate, skipped). One index probe per row listed."""
    created = Transaction.objects.filter(
        import_id=data_import.pk,
        account_id=OuterRef("account_id"),
        source=import_source(data_import),
        external_id=OuterRef("fingerprint"),
    ).values("id")[:1]
    became = Case(When(TO_CREATE, then=Subquery(created)), default=None, output_field=UUIDField())
    return rows.annotate(transaction_id=became)


def import_mapping_list(*, data_import: Import, params: object) -> QuerySet[ImportMapping]:
    filters = QueryFilters(params)
    kind = filters.choice("kind", ImportMapping.Kind.values)
    filters.check()
    qs = ImportMapping.objects.filter(data_import=data_import)
    if kind:
        qs = qs.filter(kind=kind)
    return qs.order_by("kind", "value")


def mapping_targets(*, data_import: Import) -> dict[tuple[str, str], str | None]:
    return {
        (kind, value): str(target or created) if (target or created) else None
        for kind, value, target, created in ImportMapping.objects.filter(
            data_import=data_import
        ).values_list("kind", "value", "target_id", "created_id")
    }
