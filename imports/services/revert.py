"""Revert: remove exactly what one import created, in one database transaction."""

from __future__ import annotations

import logging
import uuid

from django.utils import timezone

from core.errors import Conflict
from core.tasks import enqueue_on_commit
from finance.ledger import LedgerBatch, ledger_batch
from finance.models import Account, Category, Tag, Transaction
from imports.models import Import, ImportMapping
from imports.services.dedup import import_duplicates_mark
from imports.services.mappings import rows_accounts_resolve
from imports.services.statements import statement_balances_restore
from imports.services.stats import import_stats_refresh
from imports.services.verify import household_counts

logger = logging.getLogger("imports")


def import_revert(*, data_import: Import) -> Import:
    imp = data_import
    moved = Import.objects.filter(pk=imp.pk, status__in=Import.REVERTABLE_FROM).update(
        status=Import.Status.REVERTING, error="", updated_at=timezone.now()
    )
    imp.refresh_from_db()
    if not moved:
        raise Conflict(
            f"The import is {imp.status}: only a complete or revert_failed import can revert."
        )
    enqueue_on_commit("imports.revert", str(imp.pk))
    return imp


def _in_use(model: type, pk: uuid.UUID, ignore: set[str]) -> bool:
    """Whether anything still points at the record (any reverse relation but `ignore`)."""
    obj = model(pk=pk)
    for rel in model._meta.related_objects:
        if rel.get_accessor_name() in ignore or (
            rel.related_model is model and rel.field.name == "parent"
        ):
            continue
        if rel.many_to_many:
            if getattr(obj, rel.get_accessor_name()).exists():
                return True
        elif rel.related_model._default_manager.filter(**{rel.field.name: pk}).exists():
            return True
    return False


def _delete_created_records(imp: Import, batch: LedgerBatch) -> None:
    models = {"category": Category, "tag": Tag, "account": Account}
    # An account's daily balances and the imports pointing at it are not "uses" of it.
    ignore = {"balances", "imports"}
    for mapping in ImportMapping.objects.filter(data_import=imp, created_id__isnull=False):
        model = models[mapping.kind]
        record = model.objects.filter(pk=mapping.created_id).first()
        if record is not None and not _in_use(model, mapping.created_id, ignore):
            batch.delete_record(record)
    ImportMapping.objects.filter(data_import=imp).update(created_id=None)


def import_revert_run(*, import_id: uuid.UUID | str) -> str:
    imp = Import.objects.select_related("family").filter(pk=import_id).first()
    if imp is None or imp.status != Import.Status.REVERTING:
        return "skipped"
    try:
        with ledger_batch(family=imp.family) as batch:
            locked = Import.objects.select_for_update().filter(pk=imp.pk).first()
            if locked is None or locked.status != Import.Status.REVERTING:
                return "skipped"
            batch.delete(Transaction.objects.filter(import_id=imp.pk))
            statement_balances_restore(data_import=imp, batch=batch)
            _delete_created_records(imp, batch)
            verification = dict(imp.verification or {})
            readback = dict(verification.get("readback") or {})
            readback.update(status="reverted", after_counts=household_counts(family=imp.family))
            verification["readback"] = readback
            Import.objects.filter(pk=imp.pk).update(
                status=Import.Status.PENDING,
                verification=verification,
                reverted_at=timezone.now(),
                rows_processed=0,
                updated_at=timezone.now(),
            )
    except Exception as exc:
        logger.exception("import %s revert failed", imp.pk)
        Import.objects.filter(pk=imp.pk, status=Import.Status.REVERTING).update(
            status=Import.Status.REVERT_FAILED,
            error=f"Revert failed, nothing was removed: {exc.__class__.__name__}: {exc}"[:1000],
            updated_at=timezone.now(),
        )
        return "revert_failed"
    imp.refresh_from_db()
    rows_accounts_resolve(data_import=imp)
    import_duplicates_mark(data_import=imp)
    import_stats_refresh(data_import=imp)
    return "pending"
