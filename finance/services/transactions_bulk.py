"""Bulk create: up to 1,000 transactions per request, each under the single-create rules."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q

from finance.models import Family, Tag, Transaction, Transfer
from finance.services.ledger import ledger_changed, merge_account_dates
from finance.services.transactions import (
    transaction_build,
    transaction_refs_load,
    transaction_refs_pick,
    transactions_insert,
)


@dataclass
class BulkItemResult:
    """The outcome of one item: 201 created, 200 existing (same idempotency key), 422 errors."""

    index: int
    status: int
    transaction: Transaction | None = None
    errors: list[str] | None = None
    # False: `transaction` is the row as written, ready to serialise without a re-read.
    reload: bool = True


def transactions_bulk_create(
    *, family: Family, items: list[dict[str, Any] | list[str]]
) -> list[BulkItemResult]:
    """Create many transactions in one database transaction.

    `items` holds, per position, either the validated fields of one transaction or the list of
    its validation errors. Ids are resolved for the whole batch in one query per kind; rows are
    written by COPY, the idempotency keys decided by ON CONFLICT DO NOTHING
    (`transactions_insert`); balances and transfer matching run once, for the new rows only.
    Created rows come back as written, ready to serialise (`reload=False`); rows that matching
    paired, and existing rows, are for the caller to read back."""
    results: list[BulkItemResult] = [BulkItemResult(index=i, status=422) for i in range(len(items))]
    valid = [(i, data) for i, data in enumerate(items) if isinstance(data, dict)]
    for i, errors in enumerate(items):
        if not isinstance(errors, dict):
            results[i].errors = list(errors)
    index = transaction_refs_load(family=family, items=[data for _, data in valid])
    rows = []
    positions = []
    for i, data in valid:
        refs, errors = transaction_refs_pick(index=index, data=data)
        if errors:
            results[i].errors = errors
            continue
        rows.append((transaction_build(family=family, data=data, refs=refs), refs.tags))
        positions.append(i)
    with transaction.atomic():
        inserted = transactions_insert(rows) if rows else []
        changed: dict[uuid.UUID, dt.date | None] = {}
        new: dict[uuid.UUID, Transaction] = {}
        for txn, created in inserted:
            if created:
                merge_account_dates(changed, txn.account_id, txn.date)
                new[txn.pk] = txn
        paired = ledger_changed(family=family, account_dates=changed, created=list(new.values()))
        in_transfers = _in_transfers(list(new)) if paired else set()
    tags_of = {txn.pk: tags for txn, tags in rows}
    for i, (txn, created) in zip(positions, inserted, strict=True):
        results[i].status = 201 if created else 200
        results[i].transaction = txn
        if created and txn.pk not in in_transfers:
            _as_read(txn, tags_of[txn.pk])
            results[i].reload = False
    return results


def _in_transfers(ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these transactions are now a leg of a transfer."""
    legs = Transfer.objects.filter(
        Q(inflow_transaction_id__in=ids) | Q(outflow_transaction_id__in=ids)
    ).values_list("inflow_transaction_id", "outflow_transaction_id")
    return {pk for pair in legs for pk in pair}


_NO_TRANSFER = [
    Transaction._meta.get_field(name) for name in ("transfer_as_inflow", "transfer_as_outflow")
]


def _as_read(txn: Transaction, tags: list[Tag] | None) -> None:
    """Give a just-written row what a re-read would (its tags in their list order, no
    transfer), so serialising it costs no query. Its account, category and merchant are the
    household's records the batch already loaded."""
    ordered = sorted(tags or (), key=lambda t: (t.name, str(t.pk)))
    setattr(txn, Transaction.PREFETCHED_TAGS, ordered)
    for relation in _NO_TRANSFER:
        relation.set_cached_value(txn, None)
