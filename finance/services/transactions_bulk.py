"""Bulk create: up to 1,000 transactions per request, each under the single-create rules."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db.models import Q

from finance.ledger import ledger_batch
from finance.models import Family, Transaction, Transfer
from finance.services.transactions import (
    TransactionFields,
    transaction_as_written,
    transaction_build,
    transaction_refs_load,
    transaction_refs_pick,
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
    *, family: Family, items: list[TransactionFields | list[str]]
) -> list[BulkItemResult]:
    """Create many transactions in one ledger batch (one database transaction).

    `items` holds, per position, either the validated fields of one transaction or the list of
    its validation errors. Ids are resolved for the whole batch in one query per kind; the
    batch writes the rows in one statement, the idempotency keys decided by the unique
    constraint, and derives balances and transfer pairs once, for the new rows only.
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
    with ledger_batch(family=family) as batch:
        inserted = batch.add(rows) if rows else []
    new = [txn.pk for txn, created in inserted if created]
    in_transfers = _in_transfers(new) if batch.paired else set()
    tags_of = {txn.pk: tags for txn, tags in rows}
    for i, (txn, created) in zip(positions, inserted, strict=True):
        results[i].status = 201 if created else 200
        results[i].transaction = txn
        if created and txn.pk not in in_transfers:
            transaction_as_written(txn, tags_of[txn.pk])
            results[i].reload = False
    return results


def _in_transfers(ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these transactions are now a leg of a transfer."""
    either = Q(inflow_transaction_id__in=ids) | Q(outflow_transaction_id__in=ids)
    legs = (
        Transfer.objects.filter(either)
        .order_by()
        .values_list("inflow_transaction_id", "outflow_transaction_id")
    )
    return {pk for pair in legs for pk in pair}
