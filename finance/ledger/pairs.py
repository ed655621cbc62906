"""Transfer legs: which transactions are paired, and the kinds pairing gives them.

A transfer's legs are ledger rows; their `kind` follows from the pair, so setting and resetting
it is ledger work (the batch calls these), while choosing, confirming and rejecting a pair is
the household's business (finance/services/transfers.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db.models import Q, QuerySet

from finance.models import Account, RejectedTransfer, Transaction, Transfer

MAX_DAYS_APART = 4


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
    """Lock transactions in a fixed order (concurrent pairings queue instead of deadlocking)."""
    return list(
        Transaction.objects.select_for_update(skip_locked=skip_locked, no_key=True)
        .filter(pk__in=txn_ids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def legs_reset(transaction_ids: Iterable[uuid.UUID]) -> None:
    """Legs that lost their transfer are plain again (a one-time kind is the user's own)."""
    Transaction.objects.filter(pk__in=list(transaction_ids)).exclude(
        kind=Transaction.Kind.ONE_TIME
    ).update(kind=Transaction.Kind.STANDARD)


def legs_unpair(transaction_ids: Iterable[uuid.UUID]) -> None:
    """A rejected pair: both legs standard again."""
    Transaction.objects.filter(pk__in=list(transaction_ids)).update(kind=Transaction.Kind.STANDARD)


def legs_move_many(pairs: Iterable[tuple[uuid.UUID, uuid.UUID]]) -> None:
    """`legs_move` for each (old id, new id) pair; one query finds the old rows that are a
    leg of a transfer or of a rejected pair (most are neither: nothing to move for them)."""
    pairs = list(pairs)
    olds = [old_id for old_id, _ in pairs]
    legs = Q(inflow_transaction_id__in=olds) | Q(outflow_transaction_id__in=olds)
    linked = {
        leg
        for model in (Transfer, RejectedTransfer)
        for pair in model.objects.filter(legs).values_list(
            "inflow_transaction_id", "outflow_transaction_id"
        )
        for leg in pair
    }
    for old_id, new_id in pairs:
        if old_id in linked:
            legs_move(old_id, new_id)


def legs_move(old_id: uuid.UUID, new_id: uuid.UUID) -> None:
    """`new_id` replaces `old_id`: a transfer `old_id` is a leg of moves to it (with the leg's
    kind) when `new_id` is a leg of none, and the pairs the household rejected follow."""
    in_one = Transfer.objects.filter(inflow_transaction_id=new_id) | Transfer.objects.filter(
        outflow_transaction_id=new_id
    )
    if not in_one.exists():
        moved = Transfer.objects.filter(inflow_transaction_id=old_id).update(
            inflow_transaction_id=new_id
        ) + Transfer.objects.filter(outflow_transaction_id=old_id).update(
            outflow_transaction_id=new_id
        )
        if moved:
            kind = Transaction.objects.filter(pk=old_id).values_list("kind", flat=True).first()
            Transaction.objects.filter(pk=new_id).update(kind=kind)
    for rejected in RejectedTransfer.objects.filter(inflow_transaction_id=old_id):
        RejectedTransfer.objects.get_or_create(
            family_id=rejected.family_id,
            inflow_transaction_id=new_id,
            outflow_transaction_id=rejected.outflow_transaction_id,
        )
    for rejected in RejectedTransfer.objects.filter(outflow_transaction_id=old_id):
        RejectedTransfer.objects.get_or_create(
            family_id=rejected.family_id,
            inflow_transaction_id=rejected.inflow_transaction_id,
            outflow_transaction_id=new_id,
        )
