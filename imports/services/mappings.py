"""Changes the household makes before publishing: mappings, and forcing or skipping rows."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any, TypedDict, Unpack

from django.db import transaction

from core.errors import Conflict, ValidationFailed
from finance.models import Account, Category, Tag
from imports.models import Import, ImportMapping, ImportRow
from imports.services.dedup import import_duplicates_mark
from imports.services.lending import import_rows_ensure
from imports.services.stats import import_stats_refresh

NOT_IN_HOUSEHOLD = "does not exist in this household"
_MODELS: dict[str, Any] = {"category": Category, "tag": Tag, "account": Account}


class MappingChange(TypedDict, total=False):
    """One mapping to change, named by `id` or by `kind` and `value`."""

    id: uuid.UUID
    kind: str
    value: str
    target_id: uuid.UUID | None  # a record of the household, or None: unassigned
    create_new: bool


class RowChanges(TypedDict, total=False):
    force: bool  # create the row although it repeats a transaction from elsewhere
    skip: bool  # leave the row out


def _require_pending(imp: Import, what: str) -> None:
    if imp.parsing:
        raise Conflict("The import is pending and its file is still being parsed.")
    if imp.status != Import.Status.PENDING:
        raise Conflict(f"The import is {imp.status}: {what} can change only while pending.")


def import_mappings_update(
    *, data_import: Import, items: list[MappingChange]
) -> list[ImportMapping]:
    """Each item names a mapping (`id`, or `kind` and `value`) and sets `target_id` (a record of
    the household, or null) and/or `create_new`."""
    imp = data_import
    with transaction.atomic():
        imp = Import.objects.select_for_update().get(pk=imp.pk)
        _require_pending(imp, "mappings")
        errors: list[str] = []
        changed: list[ImportMapping] = []
        for index, item in enumerate(items):
            where = f"mappings[{index}]"
            qs = ImportMapping.objects.filter(data_import=imp)
            if item.get("id"):
                mapping = qs.filter(pk=item["id"]).first()
            else:
                mapping = qs.filter(kind=item.get("kind"), value=item.get("value")).first()
            if mapping is None:
                errors.append(f"{where}: no such mapping in this import")
                continue
            if "target_id" in item:
                target = item["target_id"]
                if target is not None:
                    exists = _MODELS[mapping.kind].objects.filter(family=imp.family, pk=target)
                    if not exists.exists():
                        errors.append(f"{where}.target_id: {NOT_IN_HOUSEHOLD}")
                        continue
                    mapping.create_new = False
                mapping.target_id = target
            if "create_new" in item:
                mapping.create_new = bool(item["create_new"])
                if mapping.create_new:
                    mapping.target_id = None
            changed.append(mapping)
        if errors:
            raise ValidationFailed(errors)
        ImportMapping.objects.bulk_update(changed, ["target_id", "create_new"])
        rows_accounts_resolve(data_import=imp)
        import_duplicates_mark(data_import=imp)
        import_stats_refresh(data_import=imp)
    return changed


def import_row_update(
    *, data_import: Import, row: ImportRow, **changes: Unpack[RowChanges]
) -> ImportRow:
    """`force`: create the row although it repeats a transaction from elsewhere.
    `skip`: leave the row out (a junk line, a total), so the import can still be cleaned.
    `row`: as listed (`import_row_list`): a borrowing import gets rows of its own first, and
    the change goes to its own row of that number."""
    with transaction.atomic():
        imp = Import.objects.select_for_update().get(pk=data_import.pk)
        _require_pending(imp, "rows")
        import_rows_ensure(data_import=imp)
        row = ImportRow.objects.get(data_import=imp, row_number=row.row_number)
        if "force" in changes:
            row.forced = bool(changes["force"])
        if "skip" in changes:
            row.skipped = bool(changes["skip"])
        ImportRow.objects.filter(pk=row.pk).update(forced=row.forced, skipped=row.skipped)
        import_duplicates_mark(data_import=imp)
        import_stats_refresh(data_import=imp)
    row.refresh_from_db()
    return row


def import_rows_skip_invalid(*, data_import: Import) -> int:
    """Leave every invalid row out at once (the wizard's "skip invalid rows")."""
    with transaction.atomic():
        imp = Import.objects.select_for_update().get(pk=data_import.pk)
        _require_pending(imp, "rows")
        import_rows_ensure(data_import=imp)
        count = ImportRow.objects.filter(data_import=imp, valid=False, skipped=False).update(
            skipped=True
        )
        import_duplicates_mark(data_import=imp)
        import_stats_refresh(data_import=imp)
    return count


def mapping_targets(imp: Import, kind: str) -> dict[str, uuid.UUID | None]:
    """Each mapped value of this kind -> its record (chosen, or created by the publish)."""
    return {
        value: target or created
        for value, target, created in ImportMapping.objects.filter(
            data_import=imp, kind=kind
        ).values_list("value", "target_id", "created_id")
    }


def rows_accounts_resolve(*, data_import: Import) -> None:
    """Rows of an account-column import go to their mapping's account (None until resolved)."""
    imp = data_import
    if imp.account_id is not None:
        return
    for mapping in ImportMapping.objects.filter(data_import=imp, kind="account"):
        target = mapping.target_id or mapping.created_id
        rows = ImportRow.objects.filter(data_import=imp, account_value=mapping.value)
        # Only rows whose account changes are written (a publish re-resolves them all).
        rows = rows.exclude(account_id=target) if target else rows.filter(account_id__isnull=False)
        rows.update(account_id=target)


def mappings_sync(imp: Import, totals: dict[str, Counter[str]]) -> None:
    """One mapping per distinct value; earlier choices for values still present are kept;
    new values map to the household's record of the same name, else categories and tags to
    "create new" and accounts to unassigned (creating accounts is the household's call)."""
    from finance.models import Category, Tag

    existing = {(m.kind, m.value): m for m in ImportMapping.objects.filter(data_import=imp)}
    models = {"category": Category, "tag": Tag, "account": Account}
    keep: set[uuid.UUID] = set()
    new: list[ImportMapping] = []
    for kind, counter in totals.items():
        names = {
            name: pk
            for pk, name in models[kind]
            .objects.filter(family=imp.family, name__in=list(counter))
            .values_list("pk", "name")
        }
        for value, n in counter.items():
            mapping = existing.get((kind, value))
            if mapping is not None:
                keep.add(mapping.pk)
                if mapping.rows_count != n:
                    ImportMapping.objects.filter(pk=mapping.pk).update(rows_count=n)
                continue
            target = names.get(value)
            new.append(
                ImportMapping(
                    data_import=imp,
                    kind=kind,
                    value=value,
                    target_id=target,
                    create_new=target is None and kind != "account",
                    rows_count=n,
                )
            )
    ImportMapping.objects.filter(data_import=imp).exclude(pk__in=keep).delete()
    ImportMapping.objects.bulk_create(new, batch_size=5000)
    rows_accounts_resolve(data_import=imp)
