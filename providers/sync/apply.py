"""Reconcile one account's upstream transactions with its stored rows (issue 6, rules 1-4;
issue 24).

- Keys: `external_id` is the upstream id; a blank id gets a slot key, `blank:<content hash>:
  <occurrence>`, the occurrence counting identical rows in this response. Identical rows keep
  distinct slots, and the same rows map to the same slots on every sync.
- An existing row whose `provider_snapshot` equals the new snapshot is not written at all,
  unless the sync had excluded it: upstream sends it again, so it is included again.
- A changed row (pending -> posted under the same id) gets the new snapshot, date, amount and
  pending flag; the household's own edits survive: category, notes and tags are never touched
  by a sync, and the name and merchant only follow upstream while they still equal what the
  previous snapshot said (so a renamed transaction keeps its name). A pending row posting
  under its id is its own posted version (`pending_settled`).
- A stored pending row the response no longer holds: pending.py (taken over by its posted
  version, else excluded by the sync once stale).
- New rows pass through the household's rules as the ledger batch writes them; what the
  household or its rules set stays whatever upstream says later."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from core.bounds import amount_problem, date_problem
from finance.ledger import ROW_FIELDS, LedgerBatch
from finance.models import Account, Family, Merchant, Transaction
from providers.sync.pending import pending_settle, upstream_name
from providers.types import UpstreamTransaction

_CHUNK = 500
NEW_ROW_FIELDS = (
    *ROW_FIELDS,
    "merchant",
    "pending",
    "provider_snapshot",
)


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


def _stored(account: Account, source: str, keys: list[str]) -> dict[str, tuple[Any, Any, bool]]:
    """key -> (primary key, provider snapshot, excluded by the sync) of the rows stored under
    `keys`: all an unchanged re-sync needs (reading whole rows was most of its time)."""
    found: dict[str, tuple[Any, Any, bool]] = {}
    for part in _chunks(keys):
        for key, pk, snapshot, by_sync in Transaction.objects.filter(
            account=account, source=source, external_id__in=part
        ).values_list("external_id", "pk", "provider_snapshot", "excluded_by_sync"):
            found[key] = (pk, snapshot, by_sync)
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
    if "name" not in kept and (txn.name == upstream_name(previous) or not previous):
        txn.name = upstream_name(snapshot)
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


def _included_again(txn: Transaction) -> list[str]:
    """Upstream sends a row the sync had excluded: it counts again (the household's own
    exclusion is not the sync's to lift)."""
    if not txn.excluded_by_sync:
        return []
    txn.excluded, txn.excluded_by_sync = False, False
    return ["excluded", "excluded_by_sync"]


def transactions_apply(
    *,
    batch: LedgerBatch,
    account: Account,
    source: str,
    rows: list[UpstreamTransaction],
    today: dt.date,
    window: tuple[dt.date, dt.date] | None = None,
) -> ApplyResult:
    """Write one account's upstream rows through the caller's ledger batch. `window`: the
    dates the response covers (None: all), outside which a stored row is not judged."""
    result = ApplyResult()
    storable = [r for r in rows if not (amount_problem(r.amount) or date_problem(r.date))]
    if len(storable) < len(rows):
        # What the ledger cannot store is left out, never half-written (core/bounds.py).
        result.notes.append(f"{len(rows) - len(storable)} upstream rows out of range were skipped")
        rows = storable
    keyed = keyed_rows(rows, account.currency)
    existing = _stored(account, source, list(keyed))
    merchants = MerchantCache(account.family)
    merchants.preload({snap["merchant"] for _, snap in keyed.values() if snap["merchant"]})
    result.pending = sum(1 for row, _ in keyed.values() if row.pending)

    stale = [
        pk for key, (pk, stored, by_sync) in existing.items() if stored != keyed[key][1] or by_sync
    ]
    result.unchanged += len(existing) - len(stale)
    for txn in _rows(stale):
        row, snapshot = keyed[txn.external_id]
        was = (txn.account_id, txn.date)
        fields = _included_again(txn)
        if txn.provider_snapshot != snapshot:
            if txn.pending and not row.pending:
                txn.pending_settled = True
                fields.append("pending_settled")
            fields += _refresh(txn, row, snapshot, merchants)
        batch.update(txn, fields=fields, was=was)
        result.updated += 1
        result.touch(row.date)

    # New rows go as tuples (no model instance each), the rules run over them in the batch.
    family_id, account_id = account.family_id, account.pk
    creates = []
    for key, (row, snapshot) in keyed.items():
        if key in existing:
            continue
        merchant = merchants.get(snapshot["merchant"])
        creates.append(
            (
                uuid.uuid4(),
                family_id,
                account_id,
                row.date,
                row.amount,
                snapshot["currency"],
                upstream_name(snapshot),
                row.notes,
                key,
                source,
                merchant.pk if merchant else None,
                row.pending,
                snapshot,
            )
        )
    if creates:
        batch.write_values(NEW_ROW_FIELDS, creates)
        result.changed = True
    result.added = len(creates)

    taken, excluded = pending_settle(
        batch=batch, account=account, source=source, listed=keyed, window=window, today=today
    )
    result.updated += taken
    result.removed += taken + excluded
    if taken or excluded:
        result.changed = True
    return result
