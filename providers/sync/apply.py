"""Reconcile one account's upstream transactions with its stored rows (issue 6, rules 1-4;
issue 24).

- Keys: `external_id` is the upstream id; a blank id gets a slot key, `blank:<content hash>:
  <occurrence>`, the occurrence counting identical rows in this response. Identical rows keep
  distinct slots, and the same rows map to the same slots on every sync.
- An existing row whose `provider_snapshot` equals the new snapshot is not written at all,
  unless the sync had excluded it: upstream sends it again, so it is included again. What is
  compared is the snapshot's digest (`provider_snapshot_hash`, one short text per row, read by
  one query per 500 keys); a row stored without one (synced before the column, restored) is
  compared by its snapshot once and then given its digest, without counting as a change.
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
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from core.bounds import amount_problem, date_problem
from core.keys import uuid7_batch
from finance.ledger import ROW_FIELDS, LedgerBatch, Was, snapshot_hashes_record
from finance.models import Account, Family, Merchant, Transaction
from providers.sync.pending import pending_settle, upstream_name
from providers.types import UpstreamTransaction

_CHUNK = 500
NEW_ROW_FIELDS = (
    *ROW_FIELDS,
    "merchant",
    "pending",
    "provider_snapshot",
    "provider_snapshot_hash",
)
# Types orjson would write its own way where json.dumps(default=str) writes str(value).
_PASSTHROUGH = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
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
        "raw": _plain_json(txn.raw),
    }


def _plain_json(value: Any) -> Any:
    """`value` as JSON gives it back (what the JSON column will hold): orjson, 7x faster
    than json for a provider row, and json for what orjson refuses (integers past 64 bits)."""
    try:
        return orjson.loads(orjson.dumps(value, default=str, option=_PASSTHROUGH))
    except orjson.JSONEncodeError:
        return json.loads(json.dumps(value, default=str))


def snapshot_digest(snapshot: dict[str, Any]) -> str:
    """The digest a re-sync compares instead of the snapshot: the same snapshot always gives
    the same digest (keys sorted, and one encoder per content: orjson, or json for what
    orjson refuses)."""
    try:
        payload = orjson.dumps(snapshot, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        payload = json.dumps(snapshot, sort_keys=True).encode()
    return hashlib.sha256(payload).hexdigest()[:32]


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


@dataclass
class Prepared:
    """An account's upstream rows as `transactions_apply` compares them, made without the
    database (so where they are read: providers/sync/fetch.py): the storable rows by key with
    their snapshots, each snapshot's digest, and how many rows the ledger could not store.
    Made for the account's currency: a row without its own takes that one."""

    currency: str
    keyed: dict[str, tuple[UpstreamTransaction, dict[str, Any]]]
    digests: dict[str, str]
    skipped: int


def rows_prepare(rows: list[UpstreamTransaction], currency: str) -> Prepared:
    today = dt.date.today()  # once, not once a row
    storable = [r for r in rows if not (amount_problem(r.amount) or date_problem(r.date, today))]
    keyed = keyed_rows(storable, currency)
    digests = {key: snapshot_digest(snapshot) for key, (_, snapshot) in keyed.items()}
    return Prepared(currency, keyed, digests, len(rows) - len(storable))


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
    """key -> (primary key, snapshot digest, excluded by the sync) of the rows stored under
    `keys`: all an unchanged re-sync needs (reading whole rows, then whole snapshots, was most
    of its time). None for an account that holds no row of this source (a first sync)."""
    rows = Transaction.objects.filter(account=account, source=source)
    if not keys or not rows.exists():
        return {}
    found: dict[str, tuple[Any, Any, bool]] = {}
    for part in _chunks(keys):
        for key, pk, digest, by_sync in rows.filter(external_id__in=part).values_list(
            "external_id", "pk", "provider_snapshot_hash", "excluded_by_sync"
        ):
            found[key] = (pk, digest, by_sync)
    return found


def _digests_fill(
    existing: dict[str, tuple[Any, Any, bool]],
    keyed: dict[str, tuple[UpstreamTransaction, dict[str, Any]]],
    digests: dict[str, str],
) -> None:
    """Rows stored without a digest: compared by their snapshot once; an unchanged one gets
    its digest recorded (no change the household sees: `updated_at` stays), a changed one
    keeps None here and is refreshed with the rest."""
    unknown = {pk: key for key, (pk, digest, _) in existing.items() if digest is None}
    if not unknown:
        return
    fill = []
    for part in _chunks(list(unknown)):
        for pk, snapshot in Transaction.objects.filter(pk__in=part).values_list(
            "pk", "provider_snapshot"
        ):
            key = unknown[pk]
            if snapshot == keyed[key][1]:
                fill.append((pk, digests[key]))
                existing[key] = (pk, digests[key], existing[key][2])
    snapshot_hashes_record(fill)


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
    txn.provider_snapshot_hash = snapshot_digest(snapshot)
    return [*changed, "provider_snapshot_hash"]


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
    prepared: Prepared | None = None,
) -> ApplyResult:
    """Write one account's upstream rows through the caller's ledger batch. `window`: the
    dates the response covers (None: all), outside which a stored row is not judged;
    `prepared`: `rows` already prepared (used when made for the account's currency)."""
    result = ApplyResult()
    if prepared is None or prepared.currency != account.currency:
        prepared = rows_prepare(rows, account.currency)
    if prepared.skipped:
        # What the ledger cannot store is left out, never half-written (core/bounds.py).
        result.notes.append(f"{prepared.skipped} upstream rows out of range were skipped")
    keyed, digests = prepared.keyed, prepared.digests
    existing = _stored(account, source, list(keyed))
    _digests_fill(existing, keyed, digests)
    merchants = MerchantCache(account.family)
    merchants.preload({snap["merchant"] for _, snap in keyed.values() if snap["merchant"]})
    result.pending = sum(1 for row, _ in keyed.values() if row.pending)

    stale = [
        pk for key, (pk, stored, by_sync) in existing.items() if stored != digests[key] or by_sync
    ]
    result.unchanged += len(existing) - len(stale)
    changes = []
    for txn in _rows(stale):
        key = txn.external_id
        row, snapshot = keyed[key]
        was = Was(txn.account_id, txn.date)
        fields = _included_again(txn)
        if txn.provider_snapshot != snapshot or txn.provider_snapshot_hash != digests[key]:
            if txn.pending and not row.pending:
                txn.pending_settled = True
                fields.append("pending_settled")
            fields += _refresh(txn, row, snapshot, merchants)
        changes.append((txn, fields, was))
        result.updated += 1
        result.touch(row.date)
    batch.update_many(changes)  # a few statements, not one a row

    # New rows go as tuples (no model instance each), the rules run over them in the batch.
    family_id, account_id = account.family_id, account.pk
    creates = []
    new = [key for key in keyed if key not in existing]
    for key, txn_id in zip(new, uuid7_batch(len(new)), strict=True):
        row, snapshot = keyed[key]
        merchant = merchants.get(snapshot["merchant"])
        creates.append(
            (
                txn_id,
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
                digests[key],
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
