"""Transfer matching: pairing a household's transactions as money moving between its own
accounts, when a ledger batch closes (finance/ledger/batch.py).

Rules (issue 3): opposite amounts in the same currency, different accounts, dates at most 4
days apart, neither leg already in a transfer, and the pair never rejected. A match is a
`pending` suggestion; the inflow leg becomes `funds_movement`, the outflow leg's kind follows the
destination account. Pairing is deterministic: closest dates first, then oldest outflow.

Concurrency: the OneToOne constraints on both legs decide between racing runs (each pair is
inserted in its own savepoint; the loser's IntegrityError is swallowed), and both legs are
locked before a pair is written, then re-read, so an edit or a rejection landing meanwhile is
never paired stale.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import NamedTuple

from django.db import IntegrityError, transaction
from django.db.models import Max, Min, Q

from finance.ledger.db.pair_candidates import legs_by_amount, pair_candidates
from finance.ledger.pairs import (
    MAX_DAYS_APART,
    legs_kinds_set,
    legs_lock,
    legs_reset,
    outflow_kind,
    unpaired,
)
from finance.models import Family, RejectedTransfer, Transaction, Transfer

_CHUNK = 500


class Leg(NamedTuple):
    """The columns matching needs, without the cost of a model instance per row."""

    pk: uuid.UUID
    account_id: uuid.UUID
    account_type: str
    date: dt.date
    amount: Decimal
    currency: str
    created_at: dt.datetime


_LEG_COLUMNS = ("id", "account_id", "account__account_type", "date", "amount", "currency")


def _touched_q(account_ids: Iterable[uuid.UUID], since: Mapping[uuid.UUID, dt.date | None]) -> Q:
    touched_q = Q()
    for account_id in account_ids:
        start = since.get(account_id)
        cond = Q(account_id=account_id)
        if start is not None:
            cond &= Q(date__gte=start)
        touched_q |= cond
    return touched_q


def _candidates(
    family: Family, touched_q: Q, window: tuple[dt.date, dt.date]
) -> list[tuple[Leg, Leg]]:
    """Possible (outflow, inflow) pairs with a touched leg (`touched_q`, dated within `window`,
    inclusive), best first: found by one self-join in the database
    (finance/ledger/db/pair_candidates.py)."""
    margin = dt.timedelta(days=MAX_DAYS_APART)
    free = Transaction.objects.filter(family=family).exclude(amount=0)  # paired: see there
    touched = free.filter(touched_q, date__gte=window[0], date__lte=window[1])
    others = free.filter(date__gte=window[0] - margin, date__lte=window[1] + margin)
    found = pair_candidates(touched, others, (*_LEG_COLUMNS, "created_at"), MAX_DAYS_APART)
    pairs = [(Leg(*outflow), Leg(*inflow)) for outflow, inflow in found]
    pairs.sort(key=_pair_order)
    return pairs


def _new_candidates(family: Family, touched: list[Leg]) -> list[tuple[Leg, Leg]]:
    """`_candidates` of rows just created (in hand, unpaired: a create's or a bulk's, at most
    1,000): their counterparts read by amount, paired here."""
    window = dt.timedelta(days=MAX_DAYS_APART)
    low = min(t.date for t in touched) - window
    high = max(t.date for t in touched) + window
    # A counterpart has the opposite amount of a touched leg (new legs are few: finding them
    # again among the others costs less than excluding them).
    wanted = sorted({-t.amount for t in touched})
    others: dict[uuid.UUID, Leg] = {t.pk: t for t in touched}
    qs = unpaired(Transaction.objects.filter(family=family, date__gte=low, date__lte=high))
    for row in legs_by_amount(qs.values_list(*_LEG_COLUMNS, "created_at"), wanted):
        leg = Leg(*row)
        others.setdefault(leg.pk, leg)
    inflows_by_key: dict[tuple[object, str], list[Leg]] = {}
    outflows_by_key: dict[tuple[object, str], list[Leg]] = {}
    for txn in others.values():
        index = inflows_by_key if txn.amount < 0 else outflows_by_key
        index.setdefault((abs(txn.amount), txn.currency), []).append(txn)
    pairs: dict[tuple[uuid.UUID, uuid.UUID], tuple[Leg, Leg]] = {}
    for txn in touched:
        key = (abs(txn.amount), txn.currency)
        if txn.amount > 0:
            found = [(txn, inflow) for inflow in inflows_by_key.get(key, [])]
        else:
            found = [(outflow, txn) for outflow in outflows_by_key.get(key, [])]
        for outflow, inflow in found:
            if inflow.account_id == outflow.account_id:
                continue
            if abs((inflow.date - outflow.date).days) > MAX_DAYS_APART:
                continue
            pairs[(outflow.pk, inflow.pk)] = (outflow, inflow)
    if not pairs:
        return []
    leg_ids = {pk for key in pairs for pk in key}
    rejected = set(
        RejectedTransfer.objects.filter(
            outflow_transaction_id__in=leg_ids, inflow_transaction_id__in=leg_ids
        ).values_list("outflow_transaction_id", "inflow_transaction_id")
    )
    ordered = [pair for key, pair in pairs.items() if key not in rejected]
    ordered.sort(key=_pair_order)
    return ordered


def _pair_order(pair: tuple[Leg, Leg]) -> tuple:
    """Closest dates first, then the oldest outflow (then inflow); ids break ties."""
    outflow, inflow = pair
    return (
        abs((inflow.date - outflow.date).days),
        outflow.date,
        outflow.created_at,
        str(outflow.pk),
        inflow.date,
        inflow.created_at,
        str(inflow.pk),
    )


def _legs_now(ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, tuple]:
    """(account_id, date, amount, currency) of locked legs, read after the lock."""
    return {
        row[0]: row[1:]
        for row in Transaction.objects.filter(pk__in=list(ids)).values_list(
            "pk", "account_id", "date", "amount", "currency"
        )
    }


def _still_match(
    current: Mapping[uuid.UUID, tuple], outflow_id: uuid.UUID, inflow_id: uuid.UUID
) -> bool:
    """The pair, as it is now (an edit may have landed since the candidates were read)."""
    if outflow_id not in current or inflow_id not in current:
        return False
    out_account, out_date, out_amount, out_currency = current[outflow_id]
    in_account, in_date, in_amount, in_currency = current[inflow_id]
    return (
        out_amount > 0
        and in_amount == -out_amount
        and in_currency == out_currency
        and in_account != out_account
        and abs((in_date - out_date).days) <= MAX_DAYS_APART
    )


def _pair_create(family: Family, outflow: Leg, inflow: Leg) -> bool:
    """Insert one pending transfer unless a racing run or a rejection got there first."""
    try:
        with transaction.atomic():
            if len(legs_lock(outflow.pk, inflow.pk, skip_locked=True)) != 2:
                return False  # another run holds a leg: it decides about this pair
            if RejectedTransfer.objects.filter(
                outflow_transaction_id=outflow.pk, inflow_transaction_id=inflow.pk
            ).exists():
                return False
            if not _still_match(_legs_now({outflow.pk, inflow.pk}), outflow.pk, inflow.pk):
                return False
            Transfer.objects.create(
                family=family,
                inflow_transaction_id=inflow.pk,
                outflow_transaction_id=outflow.pk,
                status=Transfer.Status.PENDING,
            )
            legs_kinds_set(inflow.pk, outflow.pk, inflow.account_type)
    except IntegrityError:
        return False  # a leg was paired concurrently
    return True


def _pairs_create(family: Family, pairs: list[tuple[Leg, Leg]]) -> int:
    """Write chosen (outflow, inflow) pairs in a few queries. Legs are locked first (skipping
    those another run holds: it decides about them), then re-checked: still unpaired and the
    pair still not rejected. Any IntegrityError left (a race on a backend without row locks)
    falls back to one savepoint per pair."""
    leg_ids = [pk for outflow, inflow in pairs for pk in (outflow.pk, inflow.pk)]
    with transaction.atomic():
        locked = set(legs_lock(*leg_ids, skip_locked=True))
        free = set(unpaired(Transaction.objects.filter(pk__in=locked)).values_list("pk", flat=True))
        rejected = set(
            RejectedTransfer.objects.filter(
                outflow_transaction_id__in=free, inflow_transaction_id__in=free
            ).values_list("outflow_transaction_id", "inflow_transaction_id")
        )
        current = _legs_now(free)
        chosen = [
            (outflow, inflow)
            for outflow, inflow in pairs
            if outflow.pk in free
            and inflow.pk in free
            and (outflow.pk, inflow.pk) not in rejected
            and _still_match(current, outflow.pk, inflow.pk)
        ]
        try:
            with transaction.atomic():
                Transfer.objects.bulk_create(
                    [
                        Transfer(
                            family=family,
                            inflow_transaction_id=inflow.pk,
                            outflow_transaction_id=outflow.pk,
                            status=Transfer.Status.PENDING,
                        )
                        for outflow, inflow in chosen
                    ]
                )
        except IntegrityError:
            return sum(_pair_create(family, outflow, inflow) for outflow, inflow in chosen)
        Transaction.objects.filter(pk__in=[inflow.pk for _, inflow in chosen]).update(
            kind=Transaction.Kind.FUNDS_MOVEMENT
        )
        by_kind: dict[str, list[uuid.UUID]] = {}
        for outflow, inflow in chosen:
            by_kind.setdefault(outflow_kind(inflow.account_type), []).append(outflow.pk)
        for kind, ids in by_kind.items():
            Transaction.objects.filter(pk__in=ids).update(kind=kind)
    return len(chosen)


def _stale_suggestions_drop(
    family: Family, account_ids: list[uuid.UUID], since: Mapping[uuid.UUID, dt.date | None]
) -> None:
    """A pending suggestion whose legs were edited so that they no longer match is withdrawn
    (both legs back to standard). Confirmed transfers are the household's word: kept."""
    touched_q = Q()
    for account_id in account_ids:
        for side in ("inflow_transaction", "outflow_transaction"):
            cond = Q(**{f"{side}__account_id": account_id})
            if since.get(account_id) is not None:
                cond &= Q(**{f"{side}__date__gte": since[account_id] - dt.timedelta(days=4)})
            touched_q |= cond
    stale = []
    for transfer in (
        Transfer.objects.filter(family=family, status=Transfer.Status.PENDING)
        .filter(touched_q)
        .select_related("inflow_transaction", "outflow_transaction")
    ):
        inflow, outflow = transfer.inflow_transaction, transfer.outflow_transaction
        if (
            outflow.amount <= 0
            or inflow.amount != -outflow.amount
            or inflow.currency != outflow.currency
            or inflow.account_id == outflow.account_id
            or abs((inflow.date - outflow.date).days) > MAX_DAYS_APART
        ):
            stale.append(transfer)
    if stale:
        Transfer.objects.filter(pk__in=[t.pk for t in stale]).delete()
        legs_reset(
            [pk for t in stale for pk in (t.inflow_transaction_id, t.outflow_transaction_id)]
        )


def _new_legs(created: Sequence[Transaction]) -> list[Leg]:
    return [
        Leg(t.pk, t.account_id, t.account.account_type, t.date, t.amount, t.currency, t.created_at)
        for t in created
        if t.amount != 0
    ]


def transfers_match(
    *,
    family: Family,
    account_ids: list[uuid.UUID],
    since: Mapping[uuid.UUID, dt.date | None] | None = None,
    new: Sequence[Transaction] | None = None,
) -> int:
    """Pair transactions of these accounts as pending transfers; return how many were paired.

    `since` narrows each account's own legs to those dated from a day on (the counterpart may
    be anywhere in the household within the date window). `new`: the change was only these
    rows, just created in this database transaction (a create or a bulk create): only they
    need a counterpart, as any pair of two older rows was decided when the later of them was
    written, and no suggestion can have gone stale. They are matched in one pass (at most
    1,000) from the values in hand."""
    if not account_ids:
        return 0
    since = since or {}
    if new is not None:
        legs = _new_legs(new)
        if not legs:
            return 0
        return _pairs_write(family, _choose(_new_candidates(family, legs)))
    _stale_suggestions_drop(family, account_ids, since)
    if len(set(account_ids)) == 1 and not _rows_elsewhere(family, account_ids[0]):
        return 0  # a pair needs two accounts: a household's only account with rows has none
    touched_q = _touched_q(account_ids, since)
    bounds = unpaired(Transaction.objects.filter(family=family).filter(touched_q)).aggregate(
        low=Min("date"), high=Max("date")
    )
    if bounds["low"] is None:
        return 0
    # The database joins the touched legs to their counterparts: only candidate pairs come
    # back, however many legs the range holds.
    window = (bounds["low"], bounds["high"])
    return _pairs_write(family, _choose(_candidates(family, touched_q, window)))


def _rows_elsewhere(family: Family, account_id: uuid.UUID) -> bool:
    """Whether another account of the household holds rows (a probe of each one's index)."""
    others = list(family.accounts.exclude(pk=account_id).values_list("pk", flat=True))
    return bool(others) and Transaction.objects.filter(account_id__in=others).exists()


def _pairs_write(family: Family, chosen: list[tuple[Leg, Leg]]) -> int:
    return sum(_pairs_create(family, chosen[i : i + _CHUNK]) for i in range(0, len(chosen), _CHUNK))


def _choose(candidates: list[tuple[Leg, Leg]]) -> list[tuple[Leg, Leg]]:
    """Best pairs first, each leg in at most one pair."""
    used: set[uuid.UUID] = set()
    chosen: list[tuple[Leg, Leg]] = []
    for outflow, inflow in candidates:
        if outflow.pk in used or inflow.pk in used:
            continue
        used.update((outflow.pk, inflow.pk))
        chosen.append((outflow, inflow))
    return chosen
