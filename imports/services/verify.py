"""Readback verification: after a publish, re-read from the database what the import wrote and
compare it with what its file said, instead of trusting the writer's own tally."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils import timezone

from core.exact import ExactSum
from finance.ledger import TransactionRows
from finance.models import Account, Category, Family, Tag, Transaction
from finance.serializers.fields import iso_utc
from imports.models import Import, ImportMapping, ImportRow
from imports.services.statements import statement_checks
from imports.services.stats import TO_CREATE

KINDS = ("transactions", "categories", "tags", "accounts")
_KIND_MODEL = {
    "category": (Category, "categories"),
    "tag": (Tag, "tags"),
    "account": (Account, "accounts"),
}


def household_counts(*, family: Family) -> dict[str, int]:
    """The household's records of each kind; its transactions from the ledger's row counters
    (exact, kept with the rows: a handful of rows read, not a million)."""
    rows = Transaction.objects.filter(family=family)
    return {
        "transactions": TransactionRows(
            family_id=family.pk, accounts=None, expense=None, fallback=rows
        ).count(),
        "categories": Category.objects.filter(family=family).count(),
        "tags": Tag.objects.filter(family=family).count(),
        "accounts": Account.objects.filter(family=family).count(),
    }


def expected_counts(*, data_import: Import, rows_to_create: int | None = None) -> dict[str, int]:
    """What the file says will be created: rows to create (`rows_to_create`: as just counted
    in this transaction, else counted here), and "create new" mappings."""
    imp = data_import
    if rows_to_create is None:
        rows_to_create = ImportRow.objects.filter(TO_CREATE, data_import=imp).count()
    out = {"transactions": rows_to_create}
    for kind, (_, plural) in _KIND_MODEL.items():
        out[plural] = ImportMapping.objects.filter(
            data_import=imp, kind=kind, target_id__isnull=True, create_new=True
        ).count()
    return out


def _sums(rows: Any) -> dict[str, str]:
    return {
        f"{r['account_id']}:{r['currency']}": str((r["total"] or Decimal(0)).normalize())
        for r in rows.order_by().values("account_id", "currency").annotate(total=ExactSum("amount"))
    }


def readback(
    *, data_import: Import, before: dict[str, int], expected: dict[str, int]
) -> dict[str, Any]:
    imp = data_import
    try:
        after = household_counts(family=imp.family)
        created = {
            plural: list(
                ImportMapping.objects.filter(
                    data_import=imp, kind=kind, created_id__isnull=False
                ).values_list("created_id", flat=True)
            )
            for kind, (_, plural) in _KIND_MODEL.items()
        }
        checked = {"transactions": Transaction.objects.filter(import_id=imp.pk).count()}
        for model, plural in _KIND_MODEL.values():
            checked[plural] = model.objects.filter(pk__in=created[plural]).count()
        mismatches: dict[str, Any] = {}
        for kind in KINDS:
            if checked[kind] != expected.get(kind, 0):
                mismatches[kind] = {"expected": expected.get(kind, 0), "actual": checked[kind]}
        want = _sums(ImportRow.objects.filter(TO_CREATE, data_import=imp))
        have = _sums(Transaction.objects.filter(import_id=imp.pk))
        for key in sorted(set(want) | set(have)):
            if want.get(key) != have.get(key):
                mismatches.setdefault("amounts", {})[key] = {
                    "expected": want.get(key, "0"),
                    "actual": have.get(key, "0"),
                }
        statements, unbalanced = statement_checks(data_import=imp)
        if unbalanced:
            mismatches["statements"] = unbalanced
        status, error = ("mismatch" if mismatches else "matched"), None
    except Exception as exc:  # the check itself failed: say so, never claim a match
        after, checked, mismatches, statements = {}, {}, {}, []
        status, error = "failed", f"readback failed: {exc.__class__.__name__}: {exc}"[:500]
    return {
        "status": status,
        "checked_at": iso_utc(timezone.now()),
        "expected_record_counts": expected,
        "before_counts": before,
        "after_counts": after,
        "actual_delta_counts": {k: after[k] - before.get(k, 0) for k in after},
        "checked_counts": checked,
        "mismatches": mismatches,
        "error": error,
        "statements": statements,
    }


def readback_failed(*, expected: dict[str, int], before: dict[str, int], error: str) -> dict:
    return {
        "status": "failed",
        "checked_at": iso_utc(timezone.now()),
        "expected_record_counts": expected,
        "before_counts": before,
        "after_counts": {},
        "actual_delta_counts": {},
        "checked_counts": {},
        "mismatches": {},
        "error": error[:500],
        "statements": [],
    }
