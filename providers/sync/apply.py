"""Reconcile one account's upstream transactions with its stored rows (issue 6, rules 1-4).

- Keys: `external_id` is the upstream id; a blank id gets a slot key, `blank:<content hash>:
  <occurrence>`, the occurrence counting identical rows in this response. Identical rows keep
  distinct slots, and the same rows map to the same slots on every sync.
- An existing row whose `provider_snapshot` equals the new snapshot is not written at all.
- A changed row (pending -> posted under the same id) gets the new snapshot, date, amount and
  pending flag; the household's own edits survive: category, notes and tags are never touched
  by a sync, and the name and merchant only follow upstream while they still equal what the
  previous snapshot said and neither the household nor a rule set them (so a renamed
  transaction keeps its name).
- New rows pass through the household's rules as the ledger batch writes them.
- A stored pending row that this response no longer holds is taken over by a posted row new in
  this response (same amount and currency, dates at most PENDING_TAKEOVER_DAYS apart), keeping
  the row and its edits; otherwise, once older than SYNC_STALE_PENDING_DAYS, it is excluded
  (excluded=True), never deleted."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from finance.ledger import LedgerBatch
from finance.models import Account, Family, Merchant, Transaction
from providers.types import UpstreamTransaction

PENDING_TAKEOVER_DAYS = 8
_CHUNK = 500


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    """`items` in lists of _CHUNK, one IN (...) query each."""
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


@dataclass
class ApplyResult:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    pending: int = 0
    removed: int = 0
    changed: bool = False
    notes: list[str] = field(default_factory=list)

    def touch(self, date: dt.date) -> None:
        self.changed = True


def snapshot_of(txn: UpstreamTransaction, currency: str) -> dict[str, Any]:
    return {
        "id": txn.upstream_id,
        "date": txn.date.isoformat(),
        "amount": str(txn.amount),
        "currency": currency,
        "name": txn.name[:255],
        "merchant": (txn.merchant_name or None) and txn.merchant_name[:255],
        "notes": txn.notes,
        "pending": txn.pending,
        "raw": json.loads(json.dumps(txn.raw, default=str)),
    }


def content_hash(snapshot: dict[str, Any]) -> str:
    payload = json.dumps({k: v for k, v in snapshot.items() if k != "id"}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def keyed_rows(
    rows: list[UpstreamTransaction], currency: str
) -> dict[str, tuple[UpstreamTransaction, dict[str, Any]]]:
    """key -> (row, snapshot), in response order. A repeated real id keeps its last row."""
    seen: Counter[str] = Counter()
    keyed: dict[str, tuple[UpstreamTransaction, dict[str, Any]]] = {}
    for row in rows:
        snapshot = snapshot_of(row, row.currency or currency)
        if row.upstream_id:
            key = row.upstream_id[:255]
        else:
            digest = content_hash(snapshot)
            key = f"blank:{digest}:{seen[digest]}"
            seen[digest] += 1
        keyed[key] = (row, snapshot)
    return keyed


class MerchantCache:
    def __init__(self, family: Family) -> None:
        self.family = family
        self.by_name: dict[str, Merchant] = {}

    def preload(self, names: set[str]) -> None:
        wanted = [n for n in names if n and n not in self.by_name]
        for part in _chunks(wanted):
            for merchant in Merchant.objects.filter(family=self.family, name__in=part):
                self.by_name[merchant.name] = merchant

    def get(self, name: str | None) -> Merchant | None:
        if not name:
            return None
        if name not in self.by_name:
            self.by_name[name], _ = Merchant.objects.get_or_create(family=self.family, name=name)
        return self.by_name[name]


def _stored(account: Account, source: str, keys: list[str]) -> dict[str, tuple[Any, Any]]:
    """key -> (primary key, provider snapshot) of the rows stored under `keys`: two columns,
    all an unchanged re-sync needs (reading whole rows was most of its time)."""
    found: dict[str, tuple[Any, Any]] = {}
    for part in _chunks(keys):
        for key, pk, snapshot in Transaction.objects.filter(
            account=account, source=source, external_id__in=part
        ).values_list("external_id", "pk", "provider_snapshot"):
            found[key] = (pk, snapshot)
    return found


def _rows(pks: list[Any]) -> list[Transaction]:
    qs = Transaction.objects.select_related("merchant")
    return [txn for part in _chunks(pks) for txn in qs.filter(pk__in=part)]


def _refresh(
    txn: Transaction, row: UpstreamTransaction, snapshot: dict[str, Any], merchants: MerchantCache
) -> list[str]:
    """Apply upstream changes to a stored row, keeping the household's edits."""
    previous = txn.provider_snapshot or {}
    changed = ["provider_snapshot", "date", "amount", "currency", "pending", "updated_at"]
    # What the household or its rules set stays, whatever upstream says now.
    kept = {*(txn.edited_fields or ()), *txn.rule_set_fields}
    if "name" not in kept and (txn.name == previous.get("name") or not previous):
        txn.name = snapshot["name"]
        changed.append("name")
    current_merchant = txn.merchant.name if txn.merchant_id else None
    if "merchant" not in kept and (current_merchant == previous.get("merchant") or not previous):
        txn.merchant = merchants.get(snapshot["merchant"])
        changed.append("merchant")
    txn.date = row.date
    txn.amount = row.amount
    txn.currency = snapshot["currency"]
    txn.pending = row.pending
    txn.provider_snapshot = snapshot
    return changed


def transactions_apply(
    *,
    batch: LedgerBatch,
    account: Account,
    source: str,
    rows: list[UpstreamTransaction],
    today: dt.date,
) -> ApplyResult:
    """Write one account's upstream rows through the caller's ledger batch."""
    result = ApplyResult()
    keyed = keyed_rows(rows, account.currency)
    existing = _stored(account, source, list(keyed))
    merchants = MerchantCache(account.family)
    merchants.preload({snap["merchant"] for _, snap in keyed.values() if snap["merchant"]})
    result.pending = sum(1 for row, _ in keyed.values() if row.pending)

    new_keys = [key for key in keyed if key not in existing]
    vanished = [
        txn
        for txn in Transaction.objects.filter(
            account=account, source=source, pending=True, excluded=False
        ).select_related("merchant")
        if txn.external_id not in keyed
    ]
    vanished.sort(key=lambda t: (t.date, t.created_at))
    stale_before = today - dt.timedelta(days=settings.SYNC_STALE_PENDING_DAYS)
    for old in vanished:
        candidates = [
            key
            for key in new_keys
            if not keyed[key][0].pending
            and keyed[key][0].amount == old.amount
            and keyed[key][1]["currency"] == old.currency
            and abs((keyed[key][0].date - old.date).days) <= PENDING_TAKEOVER_DAYS
        ]
        if candidates:
            key = min(candidates, key=lambda k: abs((keyed[k][0].date - old.date).days))
            new_keys.remove(key)
            row, snapshot = keyed[key]
            was = (old.account_id, old.date)
            fields = _refresh(old, row, snapshot, merchants)
            old.external_id = key
            batch.update(old, fields=[*fields, "external_id"], was=was)
            result.updated += 1
            result.touch(row.date)
        elif old.date < stale_before:
            old.excluded = True
            batch.update(old, fields=["excluded"], was=(old.account_id, old.date))
            result.removed += 1
            result.touch(old.date)

    stale = [pk for key, (pk, stored) in existing.items() if stored != keyed[key][1]]
    result.unchanged += len(existing) - len(stale)
    for txn in _rows(stale):
        row, snapshot = keyed[txn.external_id]
        was = (txn.account_id, txn.date)
        batch.update(txn, fields=_refresh(txn, row, snapshot, merchants), was=was)
        result.updated += 1
        result.touch(row.date)

    creates = []
    for key in new_keys:
        row, snapshot = keyed[key]
        creates.append(
            Transaction(
                family=account.family,
                account=account,
                date=row.date,
                amount=row.amount,
                currency=snapshot["currency"],
                name=snapshot["name"] or "Transaction",
                notes=row.notes,
                external_id=key,
                source=source,
                merchant=merchants.get(snapshot["merchant"]),
                pending=row.pending,
                provider_snapshot=snapshot,
            )
        )
        result.touch(row.date)
    batch.write(creates)
    result.added = len(creates)
    return result
