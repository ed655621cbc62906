"""The counts an import shows, refreshed after every change of its rows or mappings."""

from __future__ import annotations

from django.db.models import Count, Q

from imports.models import Import, ImportMapping, ImportRow
from imports.services.dedup import import_duplicates_mark
from imports.services.reuse import borrowed_counts, borrowed_marks_hold, rows_borrow_end

TO_CREATE = Q(valid=True, skipped=False, duplicate=False)


def import_stats_refresh(*, data_import: Import) -> dict[str, int]:
    imp = data_import
    rows = borrowed_counts(imp) if imp.rows_from_id is not None else None
    if rows is not None and not borrowed_marks_hold(imp, rows):
        # A transaction from elsewhere could repeat a row by date, amount and name: that is
        # matched row by row, on rows of its own.
        rows_borrow_end(imp)
        import_duplicates_mark(data_import=imp, written_marked=True)
        rows = None
    if rows is None:
        rows = ImportRow.objects.filter(data_import=imp).aggregate(
            rows_count=Count("id"),
            valid_rows_count=Count("id", filter=Q(valid=True)),
            invalid_rows_count=Count("id", filter=Q(valid=False, skipped=False)),
            skipped_rows_count=Count("id", filter=Q(skipped=True)),
            duplicates_count=Count("id", filter=Q(duplicate=True)),
            rows_to_create=Count("id", filter=TO_CREATE),
            unresolved_account_rows=Count("id", filter=TO_CREATE & Q(account_id__isnull=True)),
        )
    maps = ImportMapping.objects.filter(data_import=imp).aggregate(
        mappings_count=Count("id"),
        unassigned_mappings_count=Count("id", filter=Q(target_id__isnull=True, create_new=False)),
        unassigned_account_mappings=Count(
            "id", filter=Q(kind="account", target_id__isnull=True, create_new=False)
        ),
        new_categories=Count(
            "id", filter=Q(kind="category", target_id__isnull=True, create_new=True)
        ),
        new_tags=Count("id", filter=Q(kind="tag", target_id__isnull=True, create_new=True)),
        new_accounts=Count("id", filter=Q(kind="account", target_id__isnull=True, create_new=True)),
    )
    stats = {**rows, **maps}
    imp.stats = stats
    verification = dict(imp.verification or {})
    if imp.status == Import.Status.PENDING:
        verification["expected_record_counts"] = {
            "transactions": stats["rows_to_create"],
            "categories": stats["new_categories"],
            "tags": stats["new_tags"],
            "accounts": stats["new_accounts"],
        }
    imp.verification = verification
    Import.objects.filter(pk=imp.pk).update(stats=stats, verification=verification)
    return stats
