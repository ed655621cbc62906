"""Writes on many transactions at once (the admin's bulk actions): categorise, tag, exclude.

Every record named must belong to the household of every transaction it is applied to: a
superuser acting across households cannot put one household's category on another's rows."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from finance.api.errors import ValidationFailed
from finance.models import Category, Family, Tag, Transaction
from finance.services.ledger import ledger_changed, merge_account_dates


def _check_same_household(transactions: QuerySet, record: Any, field: str) -> None:
    if record is None:
        return
    if transactions.exclude(family_id=record.family_id).exists():
        raise ValidationFailed([f"{field}: belongs to another household than these transactions"])


@transaction.atomic
def transactions_categorise(*, transactions: QuerySet, category: Category | None) -> int:
    """Set (or clear, with None) the category of every transaction given."""
    _check_same_household(transactions, category, "category_id")
    return transactions.update(category=category, updated_at=timezone.now())


@transaction.atomic
def transactions_tag(*, transactions: QuerySet, tag: Tag) -> int:
    """Add the tag to every transaction given that does not have it yet."""
    _check_same_household(transactions, tag, "tag_ids")
    through = Transaction.tags.through
    ids = list(transactions.values_list("pk", flat=True))
    already = set(
        through.objects.filter(tag=tag, transaction_id__in=ids).values_list(
            "transaction_id", flat=True
        )
    )
    rows = [through(transaction_id=pk, tag=tag) for pk in ids if pk not in already]
    through.objects.bulk_create(rows, batch_size=1000)
    Transaction.objects.filter(pk__in=[r.transaction_id for r in rows]).update(
        updated_at=timezone.now()
    )
    return len(rows)


@transaction.atomic
def transactions_exclude(*, transactions: QuerySet, excluded: bool) -> int:
    """Exclude (or include again) transactions; balances follow from the earliest change on."""
    changing = transactions.exclude(excluded=excluded)
    touched: dict[Any, dict[Any, Any]] = defaultdict(dict)
    for account_id, family_id, date in changing.values_list("account_id", "family_id", "date"):
        merge_account_dates(touched[family_id], account_id, date)
    count = Transaction.objects.filter(pk__in=changing.values("pk")).update(
        excluded=excluded, updated_at=timezone.now()
    )
    for family in Family.objects.filter(pk__in=list(touched)):
        ledger_changed(family=family, account_dates=touched[family.pk])
    return count
