"""Duplicates: rows the ledger already holds.

Two kinds, both found in SQL (no per-row queries from Python):
- already imported: a transaction of the row's account with the import's source ("import",
  or a statement format's: "ofx", "camt053", "mt940") and the row's fingerprint (or upstream
  id) as external id (the same file, or an overlapping one, published before);
- from elsewhere (API, provider, manual): transactions of the account with the same date,
  amount, currency and name. With N such transactions, the first N identical rows of the file
  (by occurrence number) are duplicates, the rest are real repeats and are created.
A forced row skips the second check (it can never bypass the unique external id)."""

from __future__ import annotations

from django.db.models import Count, Exists, F, Max, Min, OuterRef, Q, Subquery

from finance.models import Transaction
from imports.models import Import, ImportRow
from imports.services.sources import DEFAULT_SOURCE, import_source

IMPORT_SOURCE = DEFAULT_SOURCE


def _candidates(imp: Import):
    return ImportRow.objects.filter(
        data_import=imp, valid=True, skipped=False, account_id__isnull=False
    )


def import_duplicates_mark(*, data_import: Import) -> int:
    imp = data_import
    ImportRow.objects.filter(data_import=imp, duplicate=True).update(
        duplicate=False, duplicate_of=None
    )
    rows = _candidates(imp)
    span = rows.aggregate(first=Min("date"), last=Max("date"))
    if span["first"] is None:
        return 0
    account_ids = list(rows.order_by().values_list("account_id", flat=True).distinct())
    ledger = Transaction.objects.filter(account_id__in=account_ids).exclude(import_id=imp.pk)
    source = import_source(imp)
    marked = 0
    if ledger.filter(source=source).exists():
        same_id = Transaction.objects.filter(
            account_id=OuterRef("account_id"),
            source=source,
            external_id=OuterRef("fingerprint"),
        ).exclude(import_id=imp.pk)
        marked += rows.filter(Exists(same_id)).update(
            duplicate=True, duplicate_of=Subquery(same_id.values("id")[:1])
        )
    elsewhere = ledger.filter(date__gte=span["first"], date__lte=span["last"]).filter(
        Q(source__isnull=True) | ~Q(source=source)
    )
    if elsewhere.exists():
        same = elsewhere.filter(
            account_id=OuterRef("account_id"),
            date=OuterRef("date"),
            amount=OuterRef("amount"),
            currency=OuterRef("currency"),
            name=OuterRef("name"),
        )
        count = same.order_by().values("account_id").annotate(n=Count("id")).values("n")[:1]
        marked += (
            rows.filter(duplicate=False, forced=False)
            .annotate(existing=Subquery(count))
            .filter(existing__gte=F("occurrence"))
            .update(
                duplicate=True,
                duplicate_of=Subquery(same.order_by("created_at", "id").values("id")[:1]),
            )
        )
    return marked
