"""The periodic settler: an import left in `importing` or `reverting` by a lost worker is moved
to the state its data is really in.

Publish and revert change the status in the same database transaction as the data, so a lost
worker leaves the data as it was before. Still, the rule looks at the data, not at that reasoning:
- importing: transactions with this import id exist -> complete (and verified), else failed;
- reverting: transactions with this import id exist -> revert_failed, else pending.
An import is stuck when its status is older than IMPORT_STUCK_AFTER_SECONDS, its progress file
(the worker's heartbeat) is as old, and (PostgreSQL) no open transaction holds its row lock."""

from __future__ import annotations

import datetime as dt
import uuid

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from finance.models import Transaction
from imports.models import Import
from imports.services.progress import progress_age_seconds, progress_clear
from imports.services.verify import expected_counts, household_counts, readback

LOST_PARSE = (
    "The worker stopped while parsing the file; change the configuration to parse it again."
)
LOST = "The worker stopped before the publish finished; nothing was written. Publish again."


def imports_settle_stuck(*, older_than: dt.timedelta | None = None) -> list[tuple[str, str, str]]:
    """Settle every stuck import; returns (id, from, to) for each one moved."""
    if older_than is None:
        older_than = dt.timedelta(seconds=settings.IMPORT_STUCK_AFTER_SECONDS)
    cutoff = timezone.now() - older_than
    moved: list[tuple[str, str, str]] = []
    stuck = Import.objects.filter(
        status__in=(Import.Status.IMPORTING, Import.Status.REVERTING), updated_at__lt=cutoff
    ).values_list("pk", flat=True)
    lost_parses = Import.objects.filter(parsing=True, updated_at__lt=cutoff)
    for pk in list(lost_parses.values_list("pk", flat=True)):
        age = progress_age_seconds(pk)
        if age is not None and age < older_than.total_seconds():
            continue
        if Import.objects.filter(pk=pk, parsing=True, updated_at__lt=cutoff).update(
            parsing=False, error=LOST_PARSE, updated_at=timezone.now()
        ):
            moved.append((str(pk), "parsing", "pending"))
    for pk in list(stuck):
        age = progress_age_seconds(pk)
        if age is not None and age < older_than.total_seconds():
            continue  # the worker is still writing
        result = _settle_one(pk, cutoff)
        if result:
            moved.append(result)
    return moved


def _settle_one(pk: uuid.UUID, cutoff: dt.datetime) -> tuple[str, str, str] | None:
    with transaction.atomic():
        qs = Import.objects.filter(pk=pk, updated_at__lt=cutoff)
        if connection.features.has_select_for_update_skip_locked:
            qs = qs.select_for_update(skip_locked=True)  # a live worker holds the lock
        imp = qs.select_related("family").first()
        if imp is None or imp.status not in (Import.Status.IMPORTING, Import.Status.REVERTING):
            return None
        has_data = Transaction.objects.filter(import_id=pk).exists()
        if imp.status == Import.Status.IMPORTING:
            target = Import.Status.COMPLETE if has_data else Import.Status.FAILED
        else:
            target = Import.Status.REVERT_FAILED if has_data else Import.Status.PENDING
        fields: dict = {"status": target, "updated_at": timezone.now()}
        if target == Import.Status.FAILED:
            fields["error"] = LOST
        elif target == Import.Status.REVERT_FAILED:
            fields["error"] = "The worker stopped before the revert finished; nothing was removed."
        Import.objects.filter(pk=pk, status=imp.status).update(**fields)
        origin = imp.status
    progress_clear(pk)
    if target == Import.Status.COMPLETE:
        imp.refresh_from_db()
        counts = household_counts(family=imp.family)
        expected = expected_counts(data_import=imp)
        before = {**counts, "transactions": counts["transactions"] - expected["transactions"]}
        check = readback(data_import=imp, before=before, expected=expected)
        Import.objects.filter(pk=pk).update(
            verification={"expected_record_counts": expected, "readback": check}
        )
    return (str(pk), origin, target)
