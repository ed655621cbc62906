"""Reads of imports, rows and mappings, scoped to a household."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Case, OuterRef, QuerySet, Subquery, UUIDField, When

from core.filters import query_param
from finance.models import Family, Transaction
from imports.models import Import, ImportMapping, ImportRow
from imports.services.sources import import_source
from imports.services.stats import TO_CREATE


@dataclass(frozen=True)
class ImportFilters:
    status: str | None = query_param(
        "choice", choices=Import.Status.values, description=", ".join(Import.Status.values)
    )
    type: str | None = query_param(
        "choice", choices=Import.Type.values, description=", ".join(Import.Type.values)
    )


def import_list(*, family: Family, filters: ImportFilters) -> QuerySet[Import]:
    qs = Import.objects.filter(family=family)
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.type:
        qs = qs.filter(type=filters.type)
    return qs.order_by("-created_at", "-id")


@dataclass(frozen=True)
class ImportRowFilters:
    valid: bool | None = query_param("boolean")
    duplicate: bool | None = query_param("boolean")


def import_row_list(*, data_import: Import, filters: ImportRowFilters) -> QuerySet[ImportRow]:
    """The import's rows in file order; each is shown through `as_listed` (an import that
    borrows its rows lists its lender's, marked for itself: imports/services/reuse.py)."""
    imp = data_import
    if imp.rows_from_id is not None:
        qs = _borrowed_rows(imp)
        if filters.duplicate is not None:
            qs = qs.filter(repeats__isnull=not filters.duplicate)
    else:
        qs = with_transaction_ids(ImportRow.objects.filter(data_import=imp), imp)
        if filters.duplicate is not None:
            qs = qs.filter(duplicate=filters.duplicate)
    if filters.valid is not None:
        qs = qs.filter(valid=filters.valid)
    return qs.order_by("row_number")


def _borrowed_rows(imp: Import) -> QuerySet[ImportRow]:
    """The lender's rows, each valid one with `repeats`: the ledger row it repeats for this
    import (its account and source, the row's fingerprint: the ledger's unique key, as
    `reuse.borrowed_counts` counts them; a borrower has written no ledger row itself), one
    index probe per row listed, as a copy of them would be marked."""
    same = Transaction.objects.filter(
        account_id=imp.account_id, source=import_source(imp), external_id=OuterRef("fingerprint")
    ).values("id")[:1]
    repeats = Case(When(valid=True, then=Subquery(same)), default=None, output_field=UUIDField())
    return ImportRow.objects.filter(data_import_id=imp.rows_from_id).annotate(repeats=repeats)


def as_listed(row: ImportRow, data_import: Import) -> ImportRow:
    """A row of `import_row_list` as the import's own: a borrowed row takes this import's
    account and marks, none skipped or forced, no transaction made from it."""
    if data_import.rows_from_id is None:
        return row
    row.data_import_id = data_import.pk
    row.account_id = data_import.account_id
    row.duplicate = row.repeats is not None  # type: ignore[attr-defined]
    row.duplicate_of = row.repeats  # type: ignore[attr-defined]
    row.skipped = row.forced = False
    row.statement_number = None
    row.transaction_id = None  # type: ignore[attr-defined]
    return row


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


@dataclass(frozen=True)
class ImportMappingFilters:
    kind: str | None = query_param(
        "choice", choices=ImportMapping.Kind.values, description="category, tag or account"
    )


def import_mapping_list(
    *, data_import: Import, filters: ImportMappingFilters
) -> QuerySet[ImportMapping]:
    qs = ImportMapping.objects.filter(data_import=data_import)
    if filters.kind:
        qs = qs.filter(kind=filters.kind)
    return qs.order_by("kind", "value")


def mapping_targets(*, data_import: Import) -> dict[tuple[str, str], str | None]:
    return {
        (kind, value): str(target or created) if (target or created) else None
        for kind, value, target, created in ImportMapping.objects.filter(
            data_import=data_import
        ).values_list("kind", "value", "target_id", "created_id")
    }
