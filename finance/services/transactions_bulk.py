"""Bulk create: up to 1,000 transactions per request, each under the single-create rules."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from finance.models import Family, Transaction
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


def transactions_bulk_create(
    *, family: Family, items: list[dict[str, Any] | list[str]]
) -> list[BulkItemResult]:
    """Create many transactions in one database transaction.

    `items` holds, per position, either the validated fields of one transaction or the list of
    its validation errors. Ids are resolved for the whole batch in one query per kind; rows are
    inserted with ON CONFLICT DO NOTHING and re-read (`transactions_insert`); balances and
    transfer matching run once, from the earliest created date of each touched account."""
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
        for txn, created in inserted:
            if created:
                merge_account_dates(changed, txn.account_id, txn.date)
        ledger_changed(family=family, account_dates=changed)
    for i, (txn, created) in zip(positions, inserted, strict=True):
        results[i].status = 201 if created else 200
        results[i].transaction = txn
    return results
