"""What becomes of a stored pending row upstream no longer sends (docs/decisions.md, "Sync
rules that never lose a posted charge").

A pending row has *vanished* when this sync's response does not hold its key although the
sync's window covered its date (a row the window did not reach is not judged), or when the
sync had already excluded it. Each vanished pending row, oldest first (date, then creation):

1. is taken over by its posted version, whenever that arrived (this sync, an earlier one, or
   after the row was excluded): a posted row of the same account and source, same amount and
   currency, dated at most PENDING_TAKEOVER_DAYS from it, not already the posted version of a
   pending row (`pending_settled`: its own pending self under the same id, or a row it took
   over). The closest date wins, then the oldest (date, then creation, then key). The
   posted row receives the household's edits (category, notes, tags, a renamed name or
   merchant, its exclusion, a one-time kind, a transfer) with the record of who set them
   (`edited_fields`, and `rule_changes` for the fields it took), so that no rule and no
   re-sync undoes them, and the pending row is deleted;
2. else, once older than SYNC_STALE_PENDING_DAYS and not excluded, is excluded by the sync
   (`excluded_by_sync`), which lifts that exclusion as soon as upstream sends the row again
   (apply.py) or its posted version arrives (1). The household's own exclusion is never
   lifted by a sync."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from typing import Any

from django.conf import settings

from finance.ledger import LedgerBatch, Was
from finance.models import Account, Transaction
from finance.rules.engine import rule_changes_merge

PENDING_TAKEOVER_DAYS = 8


def upstream_name(snapshot: dict[str, Any]) -> str:
    """The name a sync gives a row for this snapshot (apply.py writes the same)."""
    return snapshot.get("name") or "Transaction"


def _edits_give(pending: Transaction, posted: Transaction) -> list[str]:
    """Copy the household's edits of `pending` onto `posted`; the fields changed."""
    snapshot = pending.provider_snapshot or {}
    changed: dict[str, Any] = {"pending_settled": True}
    if pending.category_id is not None:
        changed["category_id"] = pending.category_id
    if pending.notes != snapshot.get("notes"):
        changed["notes"] = pending.notes
    if pending.name != upstream_name(snapshot):
        changed["name"] = pending.name
    merchant = pending.merchant.name if pending.merchant_id else None
    if merchant != snapshot.get("merchant"):
        changed["merchant_id"] = pending.merchant_id
    if pending.excluded and not pending.excluded_by_sync:
        changed["excluded"], changed["excluded_by_sync"] = True, False
    if pending.kind == Transaction.Kind.ONE_TIME:
        changed["kind"] = pending.kind
    fields = []
    for name, value in changed.items():
        if getattr(posted, name) != value:
            setattr(posted, name, value)
            fields.append(name.removesuffix("_id"))
    # pending's values of these fields now stand on posted (its tags join posted's: supersede)
    taken = {name.removesuffix("_id") for name in changed} | {"tags"}
    record = _rules_record_give(pending, posted, taken)
    if record != (posted.rule_changes or None):
        posted.rule_changes = record
        fields.append("rule_changes")
    return fields


def _rules_record_give(
    pending: Transaction, posted: Transaction, taken: set[str]
) -> list[dict[str, Any]] | None:
    """Which rule set what on `posted` once it took `pending`'s values of the `taken` fields:
    pending's record of those fields replaces posted's own (tags: both, as both rows' tags
    stay), so the API still names the rule and a re-sync keeps what it set."""
    given = [
        {"rule": change["rule"], "set": [f for f in change["set"] if f in taken]}
        for change in pending.rule_changes or ()
    ]
    own = [
        (change["rule"], [f for f in change["set"] if f == "tags" or f not in taken])
        for change in posted.rule_changes or ()
    ]
    record = rule_changes_merge([c for c in given if c["set"]], [c for c in own if c[1]])
    return record or None


def _closeness(pending: Transaction):
    def key(posted: Transaction) -> tuple:
        days = abs((posted.date - pending.date).days)
        return (days, posted.date, posted.created_at, posted.external_id)

    return key


def pending_settle(
    *,
    batch: LedgerBatch,
    account: Account,
    source: str,
    listed: Collection[str],
    window: tuple[dt.date, dt.date] | None,
    today: dt.date,
) -> tuple[int, int]:
    """Settle the vanished pending rows of one account; returns (taken over, excluded)."""
    stored = Transaction.objects.filter(account=account, source=source, pending=True)
    vanished = [
        txn
        for txn in stored.select_related("merchant").order_by("date", "created_at", "external_id")
        if txn.external_id not in listed
        and (txn.excluded_by_sync or window is None or window[0] <= txn.date <= window[1])
    ]
    if not vanished:
        return 0, 0
    span = dt.timedelta(days=PENDING_TAKEOVER_DAYS)
    candidates = list(
        Transaction.objects.filter(
            account=account,
            source=source,
            pending=False,
            pending_settled=False,
            amount__in={txn.amount for txn in vanished},
            date__gte=min(txn.date for txn in vanished) - span,
            date__lte=max(txn.date for txn in vanished) + span,
        )
    )
    stale_before = today - dt.timedelta(days=settings.SYNC_STALE_PENDING_DAYS)
    taken: list[tuple[Transaction, Transaction]] = []  # (pending, its posted version)
    excluded = 0
    for pending in vanished:
        versions = [
            posted
            for posted in candidates
            if posted.amount == pending.amount
            and posted.currency == pending.currency
            and abs((posted.date - pending.date).days) <= PENDING_TAKEOVER_DAYS
        ]
        if versions:
            posted = min(versions, key=_closeness(pending))
            candidates.remove(posted)
            # its account and date as the candidates' one query read them (the edits given
            # move neither): no read of each row again
            was = Was(posted.account_id, posted.date)
            # what the household set itself on pending, no rule or re-sync changes on posted
            batch.update(
                posted,
                fields=_edits_give(pending, posted),
                was=was,
                edited=pending.edited_fields or (),
            )
            taken.append((pending, posted))
        elif not pending.excluded and pending.date < stale_before:
            pending.excluded, pending.excluded_by_sync = True, True
            # Its account and day only: its amount was read without the row's lock (the
            # household may edit it meanwhile), so its flow is derived again from that day
            # rather than moved in place by an amount that may be stale (ledger.Was).
            batch.update(
                pending,
                fields=["excluded", "excluded_by_sync"],
                was=Was(pending.account_id, pending.date),
            )
            excluded += 1
    batch.supersede(taken)  # the pending rows go, in a few queries for all of them
    return len(taken), excluded
