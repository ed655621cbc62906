"""Publish: every row of the import becomes a transaction in ONE database transaction, or none.

The API moves the import pending/failed -> importing with a conditional UPDATE (so two
publishes at once import once) and enqueues `import_publish_run`, which writes the rows through
one ledger batch (balances and transfer pairs derived in the same database transaction), then
verifies by readback."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.utils import timezone
from django.utils.translation import ngettext

from core.errors import Conflict
from core.keys import uuid7, uuid7_sql
from core.tasks import enqueue_on_commit
from finance.ledger import ROW_FIELDS, LedgerBatch, ledger_batch
from finance.models import Account, Category, Tag, Transaction
from imports.models import Import, ImportMapping, ImportRow
from imports.services.dedup import import_duplicates_mark
from imports.services.lending import import_rows_ensure
from imports.services.mappings import mapping_targets, rows_accounts_resolve
from imports.services.progress import progress_clear, progress_write
from imports.services.sources import import_source
from imports.services.statements import statement_balances_apply
from imports.services.stats import TO_CREATE, import_stats_refresh
from imports.services.verify import expected_counts, household_counts, readback, readback_failed

logger = logging.getLogger("imports")
WRITE_BATCH = 5000
TXN_FIELDS = (
    *ROW_FIELDS,
    "category",
    "import_id",
)


def import_blockers(*, data_import: Import) -> list[str]:
    """Why the import is not publishable (empty: it is)."""
    stats = data_import.stats or {}
    out = []
    if not data_import.file:
        out.append("no file was uploaded")
    if data_import.parsing:
        out.append("the file is still being parsed")
    if not stats.get("rows_count"):
        out.append("the file has no rows")
    if stats.get("invalid_rows_count"):
        count = stats["invalid_rows_count"]
        verb = ngettext("row is invalid", "rows are invalid", count)
        out.append(f"{count} {verb} (fix or skip them)")
    if stats.get("unassigned_account_mappings"):
        count = stats["unassigned_account_mappings"]
        words = ngettext("account value is not mapped", "account values are not mapped", count)
        out.append(f"{count} {words}")
    return out


def import_publish(*, data_import: Import, enqueue: bool = True) -> Import:
    imp = data_import
    if imp.status not in Import.PUBLISHABLE_FROM:
        raise Conflict(f"The import is {imp.status}: only a pending or failed import can publish.")
    blockers = import_blockers(data_import=imp)
    if blockers:
        raise Conflict(f"The import is {imp.status} but not publishable: " + "; ".join(blockers))
    moved = Import.objects.filter(pk=imp.pk, status__in=Import.PUBLISHABLE_FROM).update(
        status=Import.Status.IMPORTING, error="", rows_processed=0, updated_at=timezone.now()
    )
    imp.refresh_from_db()
    if not moved:
        raise Conflict(f"The import is {imp.status}: only a pending or failed import can publish.")
    progress_write(imp.pk, 0)
    if enqueue:
        enqueue_on_commit("imports.publish", str(imp.pk))
    return imp


def _materialize_mappings(imp: Import) -> None:
    """Create the records of "create new" mappings (or adopt one of the same name that appeared
    since); remember those this import created, so that a revert can remove them."""
    models: dict[str, Any] = {"category": Category, "tag": Tag, "account": Account}
    for mapping in ImportMapping.objects.filter(
        data_import=imp, target_id__isnull=True, create_new=True
    ):
        model = models[mapping.kind]
        found = model.objects.filter(family=imp.family, name=mapping.value).first()
        if found is not None:
            ImportMapping.objects.filter(pk=mapping.pk).update(target_id=found.pk)
            continue
        extra = {"currency": imp.family.currency} if mapping.kind == "account" else {}
        record = model.objects.create(family=imp.family, name=mapping.value, **extra)
        ImportMapping.objects.filter(pk=mapping.pk).update(created_id=record.pk)


def _in_one_statement(imp: Import, tags: dict[str, uuid.UUID | None], batch: LedgerBatch) -> bool:
    """Whether every row can go from the import's table to the ledger in one INSERT ...
    SELECT: for a household without rules (they run in Python) and rows without tags to link.
    Otherwise each row is decided in Python first, and only those left as they were go so."""
    return not any(tags.values()) and not batch.has_rules(imp.family_id)


def _write_in_one_statement(
    imp: Import,
    batch: LedgerBatch,
    to_create: int,
    on_progress: Any = None,
    *,
    written: Sequence[int] = (),
) -> None:
    """The rows to create (`to_create` of them, as just counted), inserted by one statement
    from the import's own table (no row passes through Python): categories by the import's
    mappings, ids made by the database. `written`: the import rows already written
    (`_write_decided`), left out. None left to create (a re-import): no statement."""
    if to_create <= len(written):
        return
    qn = connection.ops.quote_name
    rows, mappings = qn(ImportRow._meta.db_table), qn(ImportMapping._meta.db_table)
    pg = connection.vendor == "postgresql"
    # Keys in time order, rows in their accounts' date order: each index of the ledger gets
    # its new entries as neighbours, not one random page each (core/keys.py). (SQLite stores
    # ids as hex text.)
    uuid_param, uuid_value = ("%s::uuid", lambda u: u) if pg else ("%s", lambda u: u.hex)
    params = [uuid_value(imp.family_id), import_source(imp), uuid_value(imp.pk), uuid_value(imp.pk)]
    leave_out = ""
    if written:
        # One array (PostgreSQL hashes a long `<> ALL` list) / one JSON text (SQLite), not a
        # parameter per row.
        leave_out = (
            " AND r.id <> ALL(%s)" if pg else " AND r.id NOT IN (SELECT value FROM json_each(%s))"
        )
        params.append(written if pg else json.dumps(written))
    order = "r.account_id, r.date DESC, r.id"
    key = uuid7_sql(connection.vendor, order)
    select = (
        f"SELECT {key}, {uuid_param}, r.account_id, r.date, r.amount, "  # noqa: S608
        "r.currency, r.name, NULLIF(r.notes, ''), r.fingerprint, %s, "
        f"COALESCE(m.target_id, m.created_id), {uuid_param} "
        f"FROM {rows} AS r LEFT JOIN {mappings} AS m ON m.data_import_id = r.data_import_id "
        "AND m.kind = 'category' AND r.category <> '' AND m.value = r.category "
        f"WHERE r.data_import_id = %s AND r.valid AND NOT r.skipped AND NOT r.duplicate{leave_out} "
        f"ORDER BY {order}"
    )
    done = batch.write_select(
        TXN_FIELDS,
        select,
        params,
        written=Transaction.objects.filter(import_id=imp.pk),
        about=to_create - len(written),
    )
    progress_write(imp.pk, len(written) + done)
    if on_progress:
        on_progress(len(written) + done)


def _write_transactions(
    imp: Import, batch: LedgerBatch, to_create: int, on_progress: Any = None
) -> None:
    tags = mapping_targets(imp, "tag")
    written: list[int] = []
    if not _in_one_statement(imp, tags, batch):
        written = _write_decided(imp, batch, tags, on_progress)
    # the rows no rule changed and without tags (all of them, with neither)
    _write_in_one_statement(imp, batch, to_create, on_progress, written=written)


def _write_decided(
    imp: Import, batch: LedgerBatch, tags: dict[str, uuid.UUID | None], on_progress: Any = None
) -> list[int]:
    """Pass every row to create through the household's rules, in chunks, and write those
    they changed or that have tags to link; returns the ids of the import rows written. The
    others are left in the import's table for one statement (most rows, for most rules)."""
    categories = mapping_targets(imp, "category")
    source = import_source(imp)
    rows = ImportRow.objects.filter(TO_CREATE, data_import=imp).order_by("id")
    fields = (
        "id",
        "account_id",
        "date",
        "amount",
        "currency",
        "name",
        "notes",
        "category",
        "tags",
        "fingerprint",
    )
    last_id = decided = 0
    written: list[int] = []
    while True:
        chunk = list(rows.filter(id__gt=last_id).values_list(*fields)[:WRITE_BATCH])
        if not chunk:
            break
        last_id = chunk[-1][0]
        txns, links = [], []
        for _, account_id, date, amount, currency, name, notes, category, row_tags, fp in chunk:
            txn_id = uuid7()
            txns.append(
                (
                    txn_id,
                    imp.family_id,
                    account_id,
                    date,
                    amount,
                    currency,
                    name,
                    notes or None,
                    fp,
                    source,
                    categories.get(category) if category else None,
                    imp.pk,
                )
            )
            for tag in row_tags:
                if tags.get(tag):
                    links.append((txn_id, tags[tag]))
        left = {values[0] for values in batch.write_decided(TXN_FIELDS, txns, tag_links=links)}
        written.extend(
            row[0] for row, values in zip(chunk, txns, strict=True) if values[0] not in left
        )
        decided += len(chunk)
        progress_write(imp.pk, decided)  # rows decided so far; the statement writes the rest
        if on_progress:
            on_progress(decided)
    return written


def import_publish_run(*, import_id: uuid.UUID | str, on_progress: Any = None) -> str:
    """The worker side of publish. Idempotent: runs only for an import in `importing`."""
    imp = Import.objects.select_related("family", "account").filter(pk=import_id).first()
    if imp is None or imp.status != Import.Status.IMPORTING:
        return "skipped"
    before = household_counts(family=imp.family)
    expected: dict[str, int] = {}
    try:
        with ledger_batch(family=imp.family) as batch:
            locked = Import.objects.select_for_update().filter(pk=imp.pk).first()
            if locked is None or locked.status != Import.Status.IMPORTING:
                return "skipped"
            if Transaction.objects.filter(import_id=imp.pk).exists():
                raise RuntimeError("transactions of this import already exist")
            _materialize_mappings(imp)
            rows_accounts_resolve(data_import=imp)
            import_duplicates_mark(data_import=imp)
            # The counts as of now, in this transaction: what is written is checked
            # against them (a million rows are not counted again).
            stats = import_stats_refresh(data_import=imp)
            if stats["rows_to_create"]:
                import_rows_ensure(data_import=imp)  # borrowed rows: written from its own
            expected = expected_counts(data_import=imp, rows_to_create=stats["rows_to_create"])
            _write_transactions(imp, batch, stats["rows_to_create"], on_progress)
            statement_balances_apply(data_import=imp, batch=batch)
            Import.objects.filter(pk=imp.pk).update(
                status=Import.Status.COMPLETE,
                rows_processed=stats["rows_count"],
                published_at=timezone.now(),
                updated_at=timezone.now(),
            )
    except Exception as exc:
        logger.exception("import %s publish failed", imp.pk)
        message = f"Publish failed, nothing was written: {exc.__class__.__name__}: {exc}"[:1000]
        Import.objects.filter(pk=imp.pk, status=Import.Status.IMPORTING).update(
            status=Import.Status.FAILED,
            error=message,
            verification={
                "expected_record_counts": expected,
                "readback": readback_failed(expected=expected, before=before, error=message),
            },
            updated_at=timezone.now(),
        )
        progress_clear(imp.pk)
        return "failed"
    progress_clear(imp.pk)
    imp.refresh_from_db()
    check = readback(data_import=imp, before=before, expected=expected)
    Import.objects.filter(pk=imp.pk).update(
        verification={"expected_record_counts": expected, "readback": check}
    )
    return check["status"]
