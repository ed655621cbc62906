"""Borrowed rows made an import's own (imports/services/reuse.py): before a row is changed,
before a borrowing import publishes rows, and before the lender's rows are parsed again or
deleted."""

from __future__ import annotations

from django.db import transaction

from imports.models import Import
from imports.services.dedup import import_duplicates_mark
from imports.services.reuse import rows_borrow_end
from imports.services.stats import import_stats_refresh


def import_rows_ensure(*, data_import: Import) -> bool:
    """The import holds rows of its own (copied from its lender if it borrowed them, marked
    and counted). Returns whether a copy was made."""
    imp = data_import
    if imp.rows_from_id is None:
        return False
    with transaction.atomic():
        if not rows_borrow_end(imp):
            return False
        import_duplicates_mark(data_import=imp, written_marked=True)
        import_stats_refresh(data_import=imp)
    return True


def import_rows_lent_back(*, data_import: Import) -> int:
    """Every import that borrows this import's rows gets its own copy (its rows are about to
    be replaced or deleted). Returns how many did."""
    borrowers = Import.objects.filter(rows_from=data_import).select_related("family", "account")
    return sum(import_rows_ensure(data_import=borrower) for borrower in borrowers)


def import_delete(*, data_import: Import) -> None:
    """Delete an import (its rows and mappings with it; the transactions it wrote stay, no
    longer linked to it), after the imports borrowing its rows got their own."""
    with transaction.atomic():
        import_rows_lent_back(data_import=data_import)
        data_import.delete()
