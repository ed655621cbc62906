"""Transfers chosen, confirmed or rejected by the household; the legs' kinds. Automatic
matching after ledger writes is `finance/services/transfer_matching.py`.

Both legs are locked before a pair is written or rejected, so a pair rejected meanwhile is
never re-suggested by a matching run.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet

from finance.api.errors import Conflict, ValidationFailed
from finance.models import Account, Family, RejectedTransfer, Transaction, Transfer

MAX_DAYS_APART = 4

ALREADY_PAIRED = "is already part of a transfer"
NOT_IN_HOUSEHOLD = "does not exist in this household"
MUST_BE_INFLOW = "must be an inflow (a negative amount: money entering its account)"
MUST_BE_OUTFLOW = "must be an outflow (a positive amount: money leaving its account)"
SAME_ACCOUNT = "must belong to another account than outflow_transaction_id"


def outflow_kind(destination_type: str) -> str:
    """The outflow leg's kind follows where the money goes (the inflow's account type)."""
    if destination_type == Account.Type.LOAN:
        return Transaction.Kind.LOAN_PAYMENT
    if destination_type == Account.Type.CREDIT_CARD:
        return Transaction.Kind.CC_PAYMENT
    if destination_type in Account.TRADING_TYPES:
        return Transaction.Kind.INVESTMENT_CONTRIBUTION
    return Transaction.Kind.FUNDS_MOVEMENT


def unpaired(qs: QuerySet[Transaction]) -> QuerySet[Transaction]:
    return qs.filter(transfer_as_inflow__isnull=True, transfer_as_outflow__isnull=True)


def legs_kinds_set(inflow_id: uuid.UUID, outflow_id: uuid.UUID, destination_type: str) -> None:
    Transaction.objects.filter(pk=inflow_id).update(kind=Transaction.Kind.FUNDS_MOVEMENT)
    Transaction.objects.filter(pk=outflow_id).update(kind=outflow_kind(destination_type))


def legs_lock(*txn_ids: uuid.UUID, skip_locked: bool = False) -> list[uuid.UUID]:
    return list(
        Transaction.objects.select_for_update(skip_locked=skip_locked, no_key=True)
        .filter(pk__in=txn_ids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def _transaction_resolve(family: Family, field: str, pk: uuid.UUID) -> Transaction | None:
    return Transaction.objects.filter(family=family, pk=pk).select_related("account").first()


@transaction.atomic
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
    legs_kinds_set(inflow.pk, outflow.pk, inflow.account.account_type)
    return transfer


def transfer_confirm(*, transfer: Transfer) -> Transfer:
    if transfer.status != Transfer.Status.CONFIRMED:
        transfer.status = Transfer.Status.CONFIRMED
        transfer.save(update_fields=["status", "updated_at"])
    return transfer


@transaction.atomic
def transfer_reject(*, transfer: Transfer) -> RejectedTransfer:
    """Not a transfer: unpair, reset both legs to standard, never suggest the pair again."""
    legs_lock(transfer.inflow_transaction_id, transfer.outflow_transaction_id)
    rejected, _ = RejectedTransfer.objects.get_or_create(
        family=transfer.family,
        inflow_transaction_id=transfer.inflow_transaction_id,
        outflow_transaction_id=transfer.outflow_transaction_id,
    )
    Transaction.objects.filter(
        pk__in=[transfer.inflow_transaction_id, transfer.outflow_transaction_id]
    ).update(kind=Transaction.Kind.STANDARD)
    Transfer.objects.filter(pk=transfer.pk).delete()
    return rejected


def transfer_legs_reset(*, transaction_ids: Iterable[uuid.UUID]) -> None:
    """Legs whose transfer disappeared (its other leg was deleted) are plain again."""
    Transaction.objects.filter(pk__in=list(transaction_ids)).exclude(
        kind=Transaction.Kind.ONE_TIME
    ).update(kind=Transaction.Kind.STANDARD)
