"""What a statement file's balances add to an import: the readback check of each statement
(opening balance + its entries = closing balance), and the closing balance as the account's
reported balance (the `set_balance` option), put back as it was by a revert."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from core.exact import ExactSum
from finance.ledger import LedgerBatch
from finance.models import Account
from imports.models import Import, ImportMapping, ImportRow, ImportStatement
from imports.services.mappings import mapping_targets

logger = logging.getLogger("imports")
MAX_LISTED = 500  # statements listed in a readback (a year of daily MT940 statements fits)


def _plain(value: Decimal | None) -> str | None:
    if value is None:
        return None
    text = f"{value.normalize():f}"
    return "0" if text in ("-0", "") else text


def _targets(imp: Import) -> dict[str, uuid.UUID | None]:
    return {} if imp.account_id else mapping_targets(imp, ImportMapping.Kind.ACCOUNT)


def _account_of(imp: Import, statement: ImportStatement, targets: dict) -> uuid.UUID | None:
    return imp.account_id or targets.get(statement.account_value)


def _statement_sums(rows: Any) -> dict[int, tuple[Decimal, int]]:
    """(sum of amounts, count) per statement, exactly on both databases (core/exact.py)."""
    return {
        row["statement_number"]: (row["total"] or Decimal(0), row["n"])
        for row in rows.values("statement_number")
        .annotate(total=ExactSum("amount"), n=Count("id"))
        .order_by()
    }


def statement_checks(*, data_import: Import) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(each statement's check, the mismatching ones by number). A statement's entries are its
    rows as read and kept (valid, not skipped: created now or already in the ledger), in the
    file's sign; a statement without both balances is `unchecked`."""
    imp = data_import
    statements = list(ImportStatement.objects.filter(data_import=imp).order_by("number"))
    if not statements:
        return [], {}
    sums = _statement_sums(ImportRow.objects.filter(data_import=imp, valid=True, skipped=False))
    targets = _targets(imp)
    checks: list[dict[str, Any]] = []
    mismatches: dict[str, Any] = {}
    for statement in statements:
        ledger_total, count = sums.get(statement.number, (Decimal(0), 0))
        total = -ledger_total  # the file's sign: money in is positive
        opening, closing = statement.opening_balance, statement.closing_balance
        computed = opening + total if opening is not None else None
        if computed is None or closing is None:
            status = "unchecked"
        else:
            status = "matched" if computed == closing else "mismatch"
        account_id = _account_of(imp, statement, targets)
        check = {
            "number": statement.number,
            "account": statement.account_value,
            "account_id": str(account_id) if account_id else None,
            "currency": statement.currency,
            "opening_balance": _plain(opening),
            "closing_balance": _plain(closing),
            "closing_date": statement.closing_date.isoformat() if statement.closing_date else None,
            "entries": count,
            "entries_total": _plain(total),
            "computed_closing": _plain(computed),
            "status": status,
        }
        if status == "mismatch" and len(mismatches) < MAX_LISTED:
            mismatches[str(statement.number)] = {
                "account": statement.account_value,
                "expected": check["closing_balance"],
                "actual": check["computed_closing"],
            }
        if len(checks) < MAX_LISTED:
            checks.append(check)
    return checks, mismatches


def _linked_to_provider(account_ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these accounts a provider account is linked to."""
    from providers.models import ProviderAccount

    links = ProviderAccount.objects.filter(account_id__in=account_ids)
    return set(links.values_list("account_id", flat=True))


def statement_balances_apply(*, data_import: Import, batch: LedgerBatch) -> list[dict[str, Any]]:
    """After a publish: each account's latest statement closing balance becomes its reported
    balance as of the closing date (`set_balance`: auto = for accounts no provider is linked
    to, true, false). Never moves a reported balance back to an older date. Runs in the
    publish's ledger batch (the balances derive with the rows); a failure here is logged and
    leaves the balances as they were, the rows published."""
    try:
        with transaction.atomic():
            return _balances_apply(data_import, batch)
    except Exception:
        logger.exception("import %s: setting the statement balances failed", data_import.pk)
        return []


def _balances_apply(data_import: Import, batch: LedgerBatch) -> list[dict[str, Any]]:
    imp = data_import
    mode = (imp.configuration or {}).get("set_balance", "auto")
    if mode == "false" or imp.type not in Import.STATEMENT_TYPES:
        return []
    targets = _targets(imp)
    latest: dict[uuid.UUID, ImportStatement] = {}
    for statement in ImportStatement.objects.filter(
        data_import=imp, closing_balance__isnull=False, closing_date__isnull=False
    ).order_by("closing_date", "number"):
        account_id = _account_of(imp, statement, targets)
        if account_id is not None:
            latest[account_id] = statement
    changes: list[dict[str, Any]] = []
    linked = _linked_to_provider(list(latest)) if mode == "auto" else set()
    for account in Account.objects.filter(pk__in=list(latest), family=imp.family):
        statement = latest[account.pk]
        if statement.currency and statement.currency != account.currency:
            continue
        if account.pk in linked:
            continue
        known = account.reported_balance_at
        if known is not None and timezone.localdate(known) > statement.closing_date:
            continue
        closing = statement.closing_balance
        assert closing is not None and statement.closing_date is not None
        # A liability's balance is what is owed: a statement shows a debt as negative.
        balance = -closing if account.classification == "liability" else closing
        at = timezone.make_aware(dt.datetime.combine(statement.closing_date, dt.time(23, 59, 59)))
        changes.append(
            {
                "account_id": str(account.pk),
                "statement": statement.number,
                "balance": str(balance),
                "currency": account.currency,
                "at": at.isoformat(),
                "previous_balance": None
                if account.reported_balance is None
                else str(account.reported_balance),
                "previous_at": known.isoformat() if known else None,
            }
        )
        batch.reported_balance(account, balance, at)
    Import.objects.filter(pk=imp.pk).update(balances_set=changes)
    return changes


def statement_balances_restore(*, data_import: Import, batch: LedgerBatch) -> set[uuid.UUID]:
    """In a revert: put back the reported balances this import set, where nobody changed them
    since, through the revert's ledger batch. Returns the accounts left without a reported
    balance."""
    imp = data_import
    cleared: set[uuid.UUID] = set()
    for change in imp.balances_set or []:
        account = Account.objects.filter(pk=change["account_id"]).first()
        if account is None or account.reported_balance is None:
            continue
        at = dt.datetime.fromisoformat(change["at"])
        if account.reported_balance != Decimal(change["balance"]) or (
            account.reported_balance_at != at
        ):
            continue  # a later import or a sync set it since: theirs stands
        if change["previous_balance"] is None:
            batch.reported_balance_clear(account)
            cleared.add(account.pk)
        else:
            batch.reported_balance(
                account,
                Decimal(change["previous_balance"]),
                dt.datetime.fromisoformat(change["previous_at"]) if change["previous_at"] else None,
            )
    Import.objects.filter(pk=imp.pk).update(balances_set=[])
    return cleared
