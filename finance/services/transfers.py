"""Transfers chosen, confirmed or rejected by the household. Automatic matching, and the kinds
a pair gives its legs, belong to the ledger (finance/ledger/transfer_matching.py, pairs.py).

Both legs are locked before a pair is written or rejected, so a pair rejected meanwhile is
never re-suggested by a matching run.
"""

from __future__ import annotations

import uuid

from django.db import IntegrityError, transaction
from django.db.models import Q

from core.errors import Conflict, ValidationFailed
from finance.ledger import MAX_DAYS_APART, LedgerBatch, ledger_batch, legs_lock
from finance.models import Family, RejectedTransfer, Transaction, Transfer

__all__ = ["MAX_DAYS_APART", "transfer_confirm", "transfer_create", "transfer_reject"]

ALREADY_PAIRED = "is already part of a transfer"
NOT_IN_HOUSEHOLD = "does not exist in this household"
MUST_BE_INFLOW = "must be an inflow (a negative amount: money entering its account)"
MUST_BE_OUTFLOW = "must be an outflow (a positive amount: money leaving its account)"
SAME_ACCOUNT = "must belong to another account than outflow_transaction_id"


def _transaction_resolve(family: Family, field: str, pk: uuid.UUID) -> Transaction | None:
    return Transaction.objects.filter(family=family, pk=pk).select_related("account").first()


def transfer_create(
    *, family: Family, inflow_transaction_id: uuid.UUID, outflow_transaction_id: uuid.UUID
) -> Transfer:
    """Link two chosen transactions as a confirmed transfer."""
    errors: list[str] = []
    inflow = _transaction_resolve(family, "inflow_transaction_id", inflow_transaction_id)
    outflow = _transaction_resolve(family, "outflow_transaction_id", outflow_transaction_id)
    if inflow is None:
        errors.append(f"inflow_transaction_id: {NOT_IN_HOUSEHOLD}")
    elif inflow.amount >= 0:
        errors.append(f"inflow_transaction_id: {MUST_BE_INFLOW}")
    if outflow is None:
        errors.append(f"outflow_transaction_id: {NOT_IN_HOUSEHOLD}")
    elif outflow.amount <= 0:
        errors.append(f"outflow_transaction_id: {MUST_BE_OUTFLOW}")
    if inflow is not None and outflow is not None and inflow.account_id == outflow.account_id:
        errors.append(f"inflow_transaction_id: {SAME_ACCOUNT}")
    if errors:
        raise ValidationFailed(errors)
    with ledger_batch(family=family) as batch:
        return _pair(batch, family, inflow, outflow)


def _pair(
    batch: LedgerBatch, family: Family, inflow: Transaction, outflow: Transaction
) -> Transfer:
    legs_lock(inflow.pk, outflow.pk)
    for name, txn in (("inflow_transaction_id", inflow), ("outflow_transaction_id", outflow)):
        if Transfer.objects.filter(Q(inflow_transaction=txn) | Q(outflow_transaction=txn)).exists():
            raise Conflict(f"{name}: transaction {txn.pk} {ALREADY_PAIRED}.")
    try:
        with transaction.atomic():
            transfer = Transfer.objects.create(
                family=family,
                inflow_transaction=inflow,
                outflow_transaction=outflow,
                status=Transfer.Status.CONFIRMED,
            )
    except IntegrityError:
        raise Conflict(f"One of the transactions {ALREADY_PAIRED}.") from None
    # The household says it is a transfer: forget an earlier rejection of this pair.
    RejectedTransfer.objects.filter(inflow_transaction=inflow, outflow_transaction=outflow).delete()
    batch.pair(inflow, outflow)
    return transfer


def transfer_confirm(*, transfer: Transfer) -> Transfer:
    if transfer.status != Transfer.Status.CONFIRMED:
        transfer.status = Transfer.Status.CONFIRMED
        transfer.save(update_fields=["status", "updated_at"])
    return transfer


def transfer_reject(*, transfer: Transfer) -> RejectedTransfer:
    """Not a transfer: unpair, reset both legs to standard, never suggest the pair again."""
    with ledger_batch(family=transfer.family) as batch:
        legs = (transfer.inflow_transaction_id, transfer.outflow_transaction_id)
        legs_lock(*legs)
        rejected, _ = RejectedTransfer.objects.get_or_create(
            family=transfer.family,
            inflow_transaction_id=transfer.inflow_transaction_id,
            outflow_transaction_id=transfer.outflow_transaction_id,
        )
        batch.unpair(legs)
        Transfer.objects.filter(pk=transfer.pk).delete()
    return rejected
