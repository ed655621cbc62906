"""Writes to transactions: create (idempotent by external_id), update, delete."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction

from finance.api.errors import ValidationFailed
from finance.models import Account, Category, Family, Merchant, Tag, Transaction
from finance.services.ledger import ledger_changed, merge_account_dates

NOT_IN_HOUSEHOLD = "does not exist in this household"
DEFAULT_SOURCE = "api"


def signed_amount(amount: Decimal, nature: str | None) -> Decimal:
    """decisions.md: income/inflow store -|amount|, expense/outflow +|amount|, else as sent."""
    if nature in ("income", "inflow"):
        return -abs(amount)
    if nature in ("expense", "outflow"):
        return abs(amount)
    return amount


@dataclass
class ResolvedRefs:
    account: Account | None = None
    category: Category | None = None
    merchant: Merchant | None = None
    tags: list[Tag] | None = None


def transaction_refs_resolve(*, family: Family, data: dict[str, Any]) -> ResolvedRefs:
    """Load the records a request names; any that is unknown or foreign is a 422 naming it."""
    errors: list[str] = []
    refs = ResolvedRefs()
    if data.get("account_id") is not None:
        refs.account = Account.objects.filter(family=family, pk=data["account_id"]).first()
        if refs.account is None:
            errors.append(f"account_id: {NOT_IN_HOUSEHOLD}")
    for field, model, attr in (
        ("category_id", Category, "category"),
        ("merchant_id", Merchant, "merchant"),
    ):
        if data.get(field) is not None:
            found = model.objects.filter(family=family, pk=data[field]).first()
            if found is None:
                errors.append(f"{field}: {NOT_IN_HOUSEHOLD}")
            setattr(refs, attr, found)
    if "tag_ids" in data:
        wanted = list(dict.fromkeys(data["tag_ids"]))
        refs.tags = list(Tag.objects.filter(family=family, pk__in=wanted))
        missing = set(wanted) - {tag.pk for tag in refs.tags}
        errors.extend(
            f"tag_ids: {tag_id} {NOT_IN_HOUSEHOLD}" for tag_id in sorted(map(str, missing))
        )
    if errors:
        raise ValidationFailed(errors)
    return refs


def _existing(account: Account, source: str, external_id: str) -> Transaction | None:
    return Transaction.objects.filter(
        account=account, source=source, external_id=external_id
    ).first()


def transaction_build(*, family: Family, data: dict[str, Any], refs: ResolvedRefs) -> Transaction:
    """An unsaved Transaction from validated request data (used by single and bulk create)."""
    external_id = data.get("external_id") or None
    source = (data.get("source") or DEFAULT_SOURCE) if external_id else None
    return Transaction(
        family=family,
        account=refs.account,
        date=data["date"],
        amount=signed_amount(data["amount"], data.get("nature")),
        currency=data.get("currency") or family.currency,
        name=data["name"],
        notes=data.get("notes"),
        external_id=external_id,
        source=source,
        category=refs.category,
        merchant=refs.merchant,
        excluded=data.get("excluded", False),
    )


def transaction_create(*, family: Family, data: dict[str, Any]) -> tuple[Transaction, bool]:
    """Create a transaction, or return the existing one for its (account, source, external_id).

    Returns (transaction, created). The unique constraint decides between racing requests."""
    refs = transaction_refs_resolve(family=family, data=data)
    txn = transaction_build(family=family, data=data, refs=refs)
    if txn.external_id:
        existing = _existing(txn.account, txn.source, txn.external_id)
        if existing is not None:
            return existing, False
    try:
        with transaction.atomic():
            txn.save(force_insert=True)
            if refs.tags:
                txn.tags.set(refs.tags)
            ledger_changed(family=family, account_dates={txn.account_id: txn.date})
    except IntegrityError:
        existing = _existing(txn.account, txn.source, txn.external_id) if txn.external_id else None
        if existing is None:
            raise
        return existing, False
    return txn, True


_PLAIN_FIELDS = ("date", "name", "notes", "currency", "excluded")


@transaction.atomic
def transaction_update(*, txn: Transaction, data: dict[str, Any]) -> Transaction:
    family = txn.family
    refs = transaction_refs_resolve(family=family, data=data)
    changed: dict[uuid.UUID, Any] = {}
    merge_account_dates(changed, txn.account_id, txn.date)
    for field in _PLAIN_FIELDS:
        if field in data:
            setattr(txn, field, data[field])
    if refs.account is not None:
        txn.account = refs.account
    if "amount" in data:
        txn.amount = signed_amount(data["amount"], data.get("nature"))
    elif "nature" in data:
        txn.amount = signed_amount(txn.amount, data["nature"])
    if "category_id" in data:
        txn.category = refs.category
    if "merchant_id" in data:
        txn.merchant = refs.merchant
    if "external_id" in data:
        txn.external_id = data["external_id"] or None
        txn.source = (
            (data.get("source") or txn.source or DEFAULT_SOURCE) if txn.external_id else None
        )
    elif data.get("source") and txn.external_id:
        txn.source = data["source"]
    try:
        with transaction.atomic():
            txn.save()
    except IntegrityError:
        raise ValidationFailed(
            ["external_id: another transaction of this account already has it"]
        ) from None
    if refs.tags is not None:
        txn.tags.set(refs.tags)
    merge_account_dates(changed, txn.account_id, txn.date)
    ledger_changed(family=family, account_dates=changed)
    return txn


@transaction.atomic
def transaction_delete(*, txn: Transaction) -> None:
    family, account_id, date = txn.family, txn.account_id, txn.date
    txn.delete()
    ledger_changed(family=family, account_dates={account_id: date})
