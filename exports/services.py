"""Writes of exports and restores: start, run (the Celery tasks' work), read back, expire."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import shutil
import tempfile
import uuid
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import connection, transaction
from django.http import FileResponse
from django.utils import timezone

from core.errors import ApplicationError, Conflict
from core.exact import ExactSum
from core.tasks import enqueue_on_commit
from exports.archive import ArchiveSummary, Progress, archive_write
from exports.models import Export, Restore
from exports.reader import Archive, archive_open
from exports.restore import NOT_EMPTY, Restorer, transactions_kind_set
from exports.selectors import KINDS, archive_querysets
from finance.ledger import ledger_batch
from finance.models import Account, Family, Transaction, Transfer, User
from finance.serializers.fields import iso_utc

logger = logging.getLogger("exports")
UPLOAD_CHUNK = 1 << 20
ABANDONED = "The restore's worker stopped before it finished: nothing was kept."


def exports_dir() -> Path:
    path = Path(settings.EXPORTS_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def restores_dir() -> Path:
    path = Path(settings.RESTORES_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


# -- export ------------------------------------------------------------------------------------
def household_archive_write(
    *, family: Family, path: Path, progress: Progress | None = None
) -> ArchiveSummary:
    """Write the household's archive to `path` from one consistent snapshot of its data (a
    read-only repeatable-read transaction on PostgreSQL when this opens the transaction;
    SQLite's read transaction is one)."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql" and outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return archive_write(family=family, path=path, progress=progress)


def export_create(*, family: Family, requested_by: User | None = None) -> Export:
    export = Export.objects.create(family=family, requested_by=requested_by)
    enqueue_on_commit("exports.run", str(export.pk))
    return export


def export_path(export: Export) -> Path | None:
    """The archive of a complete export, while it is kept."""
    if export.status != Export.Status.COMPLETE or not export.file_name:
        return None
    path = Path(settings.EXPORTS_DIR) / export.file_name
    return path if path.is_file() else None


def export_download(export: Export) -> FileResponse | None:
    """The archive of a complete export as an attachment (None: not ready, or expired)."""
    path = export_path(export)
    if path is None:
        return None
    stamp = export.created_at.strftime("%Y%m%d-%H%M%S")
    return FileResponse(
        path.open("rb"),
        as_attachment=True,
        filename=f"household-export-{stamp}.zip",
        content_type="application/zip",
    )


def export_run(*, export_id: str, progress: Progress | None = None) -> str:
    claimed = Export.objects.filter(pk=export_id, status=Export.Status.PENDING).update(
        status=Export.Status.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return f"export {export_id}: not pending"
    export = Export.objects.select_related("family").get(pk=export_id)
    folder = exports_dir() / str(export.family_id)
    folder.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".export-", suffix=".zip", dir=folder)
    os.close(handle)
    temp_path = Path(temp)
    try:
        summary = household_archive_write(family=export.family, path=temp_path, progress=progress)
        final = folder / f"{export.pk}.zip"
        os.replace(temp_path, final)
    except Exception as exc:
        temp_path.unlink(missing_ok=True)
        logger.exception("export %s failed", export_id)
        Export.objects.filter(pk=export.pk).update(
            status=Export.Status.FAILED,
            error=f"{exc.__class__.__name__}: {exc}"[:500],
            completed_at=timezone.now(),
        )
        return f"export {export_id}: failed"
    Export.objects.filter(pk=export.pk).update(
        status=Export.Status.COMPLETE,
        counts=summary.kind_counts(),
        size_bytes=summary.size_bytes,
        file_name=f"{export.family_id}/{export.pk}.zip",
        completed_at=timezone.now(),
    )
    return f"export {export_id}: complete, {summary.size_bytes} bytes"


def exports_expire(*, now: dt.datetime | None = None) -> int:
    """Delete exports (and their files) older than EXPORT_RETENTION_HOURS, any half-written
    file as old, and the uploads of restores abandoned as long ago; returns how many exports
    went."""
    cutoff = (now or timezone.now()) - dt.timedelta(hours=settings.EXPORT_RETENTION_HOURS)
    gone = 0
    # An export still pending or running this long ago lost its worker: it goes too.
    for export in Export.objects.filter(created_at__lt=cutoff):
        if export.file_name:
            (Path(settings.EXPORTS_DIR) / export.file_name).unlink(missing_ok=True)
        export.delete()
        gone += 1
    # A restore whose worker died keeps its upload no longer than an export is kept.
    for restore in Restore.objects.filter(
        created_at__lt=cutoff, status__in=(Restore.Status.PENDING, Restore.Status.RUNNING)
    ):
        if restore.file_name:
            (Path(settings.RESTORES_DIR) / restore.file_name).unlink(missing_ok=True)
        Restore.objects.filter(pk=restore.pk).update(
            status=Restore.Status.FAILED, file_name="", error=ABANDONED, completed_at=timezone.now()
        )
    root = Path(settings.EXPORTS_DIR)
    if root.is_dir():
        for leftover in root.glob("*/.export-*.zip"):
            with contextlib.suppress(OSError):
                if dt.datetime.fromtimestamp(leftover.stat().st_mtime, tz=dt.UTC) < cutoff:
                    leftover.unlink()
    return gone


# -- restore -----------------------------------------------------------------------------------
def _household_empty(family: Family) -> None:
    if Account.objects.filter(family=family).exists():
        raise Conflict(NOT_EMPTY)


def restore_create(*, family: Family, upload: IO[bytes]) -> Restore:
    """Keep an uploaded archive for the worker once it is verified: ValidationFailed (422) for
    anything but an intact archive, Conflict (409) for a household that has accounts. Nothing
    is written before both checks pass."""
    _household_empty(family)
    handle, temp = tempfile.mkstemp(prefix=".upload-", suffix=".zip", dir=restores_dir())
    path = Path(temp)
    try:
        with os.fdopen(handle, "wb") as out:
            shutil.copyfileobj(upload, out, UPLOAD_CHUNK)
        with archive_open(path) as archive:
            counts = {kind: archive.count(kind) for kind in KINDS}
        restore = Restore(family=family, size_bytes=path.stat().st_size, counts=counts)
        final = restores_dir() / f"{restore.pk}.zip"
        os.replace(path, final)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    restore.file_name = final.name
    restore.save()
    enqueue_on_commit("exports.restore", str(restore.pk))
    return restore


class _ReadbackMismatch(Exception):
    def __init__(self, readback: dict[str, Any]) -> None:
        super().__init__("readback mismatch")
        self.readback = readback


def _account_sums(family: Family) -> dict[str, Decimal]:
    """The sum of the transactions per account and currency, exact on both databases."""
    rows = Transaction.objects.filter(family=family).order_by()
    return {
        f"{row['account_id']}:{row['currency']}": row["total"]
        for row in rows.values("account_id", "currency").annotate(total=ExactSum("amount"))
    }


def restore_readback(*, family: Family, archive: Archive, namespace: uuid.UUID) -> dict[str, Any]:
    """Counts per kind and sums per account, read back from the database, against the
    manifest (as imports read theirs back, imports/services/verify.py)."""
    expected = {kind: archive.count(kind) for kind in KINDS}
    actual = {kind: qs.order_by().count() for kind, qs in archive_querysets(family=family).items()}
    mismatches: dict[str, Any] = {}
    for kind in KINDS:
        if expected[kind] != actual[kind]:
            mismatches[kind] = {"expected": expected[kind], "actual": actual[kind]}
    want = {}
    for key, total in archive.manifest["sums"].items():
        account_id, _, currency = str(key).partition(":")
        want[f"{uuid.uuid5(namespace, account_id)}:{currency}"] = str(total)
    have = {key: str(total.normalize()) for key, total in _account_sums(family).items()}
    sums = {
        key: {"expected": want.get(key, "0"), "actual": have.get(key, "0")}
        for key in sorted(set(want) | set(have))
    }
    bad_sums = {key: pair for key, pair in sums.items() if pair["expected"] != pair["actual"]}
    if bad_sums:
        mismatches["sums"] = bad_sums
    return {
        "status": "mismatch" if mismatches else "matched",
        "checked_at": iso_utc(timezone.now()),
        "expected_counts": expected,
        "actual_counts": actual,
        "sums": sums,
        "mismatches": mismatches,
    }


def restore_apply(
    *, restore: Restore, archive: Archive, progress: Progress | None = None
) -> dict[str, Any]:
    """Write the archive into the restore's household in one database transaction and read it
    back; any failure, a mismatched readback included, leaves nothing written."""
    with transaction.atomic():
        family = Family.objects.select_for_update().get(pk=restore.family_id)
        _household_empty(family)
        with ledger_batch(family=family) as batch:
            restorer = Restorer(
                family=family, archive=archive, batch=batch, namespace=restore.pk, progress=progress
            )
            restorer.run()
        extra = restorer.transfers_not_archived()
        if extra:  # matching found pairs the household never had: take them back
            legs = set()
            for inflow, outflow in Transfer.objects.filter(pk__in=extra).values_list(
                "inflow_transaction_id", "outflow_transaction_id"
            ):
                legs.update((inflow, outflow))
            Transfer.objects.filter(pk__in=extra).delete()
            with ledger_batch(family=family) as batch:
                transactions_kind_set(batch, restorer.kinds_of(legs))
        readback = restore_readback(family=family, archive=archive, namespace=restore.pk)
        if readback["status"] != "matched":
            raise _ReadbackMismatch(readback)
    return readback


def restore_from_file(*, family: Family, path: Path, progress: Progress | None = None) -> Restore:
    """Restore an archive on disk (the shell's restore_household) at once, in this process."""
    _household_empty(family)
    with archive_open(path) as archive:
        counts = {kind: archive.count(kind) for kind in KINDS}
    restore = Restore.objects.create(family=family, size_bytes=path.stat().st_size, counts=counts)
    restore_run(restore_id=str(restore.pk), progress=progress, path=path)
    restore.refresh_from_db()
    return restore


def restore_run(
    *, restore_id: str, progress: Progress | None = None, path: Path | None = None
) -> str:
    """Run a pending restore: its uploaded archive (deleted afterwards), or `path` (kept)."""
    claimed = Restore.objects.filter(pk=restore_id, status=Restore.Status.PENDING).update(
        status=Restore.Status.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return f"restore {restore_id}: not pending"
    restore = Restore.objects.get(pk=restore_id)
    uploaded = path is None
    if path is None:
        path = Path(settings.RESTORES_DIR) / restore.file_name
    outcome: dict[str, Any] = {"status": Restore.Status.COMPLETE}
    try:
        with archive_open(path) as archive:
            outcome["readback"] = restore_apply(restore=restore, archive=archive, progress=progress)
    except _ReadbackMismatch as exc:
        outcome.update(status=Restore.Status.FAILED, readback=exc.readback)
        outcome["error"] = "The records read back do not match the manifest: nothing was kept."
    except ApplicationError as exc:
        outcome.update(status=Restore.Status.FAILED, error=exc.message)
    except Exception as exc:
        logger.exception("restore %s failed", restore_id)
        outcome.update(status=Restore.Status.FAILED, error=f"{exc.__class__.__name__}: {exc}"[:500])
    finally:
        if uploaded:
            path.unlink(missing_ok=True)
    Restore.objects.filter(pk=restore.pk).update(
        completed_at=timezone.now(), file_name="", **outcome
    )
    return f"restore {restore_id}: {outcome['status']}"
