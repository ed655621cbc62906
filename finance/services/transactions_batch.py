"""Writes on many transactions at once (the admin's bulk actions): categorise, tag, exclude.

Every record named must belong to the household of every transaction it is applied to: a
superuser acting across households cannot put one household's category on another's rows."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from core.errors import ValidationFailed
from finance.ledger import ledger_batch
from finance.models import Category, Tag, Transaction


def _check_same_household(transactions: QuerySet, record: Any, field: str) -> None:
    if record is None:
        return
    if transactions.exclude(family_id=record.family_id).exists():
        raise ValidationFailed([f"{field}: belongs to another household than these transactions"])


def transactions_categorise(
    *, transactions: QuerySet[Transaction], category: Category | None
) -> int:
    """Set (or clear, with None) the category of every transaction given."""
    _check_same_household(transactions, category, "category_id")
    with ledger_batch() as batch:
        batch.mark_edited(transactions, ["category"])
        return batch.update_rows(transactions, category=category)


def transactions_tag(*, transactions: QuerySet[Transaction], tag: Tag) -> int:
    """Add the tag to every transaction given that does not have it yet."""
    _check_same_household(transactions, tag, "tag_ids")
    with ledger_batch() as batch:
        batch.mark_edited(transactions, ["tags"])
        return batch.tag(transactions, tag)


def transactions_exclude(*, transactions: QuerySet[Transaction], excluded: bool) -> int:
    """Exclude (or include again) transactions; balances follow from the earliest change on."""
    with ledger_batch() as batch:
        batch.mark_edited(transactions, ["excluded"])
        return batch.exclude(transactions, excluded=excluded)


def transactions_delete(*, transactions: QuerySet[Transaction]) -> int:
    """Delete transactions (the admin's delete action); balances and pairs follow."""
    with ledger_batch() as batch:
        return batch.delete(transactions)
