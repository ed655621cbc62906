"""Reads of imports, rows and mappings, scoped to a household."""

from __future__ import annotations

from django.db.models import QuerySet

from finance.api.filters import QueryFilters
from finance.models import Family
from imports.models import Import, ImportMapping, ImportRow


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
    qs = ImportRow.objects.filter(data_import=data_import)
    if valid is not None:
        qs = qs.filter(valid=valid)
    if duplicate is not None:
        qs = qs.filter(duplicate=duplicate)
    return qs.order_by("row_number")


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
