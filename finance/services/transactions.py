"""Writes to transactions: create (idempotent by external_id), update, delete."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, models, transaction
from django.utils import timezone

from finance.api.errors import ValidationFailed
from finance.models import Account, Category, Family, Merchant, Tag, Transaction
from finance.services.fastinsert import fast_insert, fast_insert_new
from finance.services.ledger import ledger_changed, merge_account_dates

NOT_IN_HOUSEHOLD = "does not exist in this household"
DEFAULT_SOURCE = "api"


def signed_amount(amount: Decimal, nature: str | None) -> Decimal:
    """decisions.md: income/inflow store -|amount|, expense/outflow +|amount|, else as sent."""
    if nature in ("income", "inflow"):
        return -abs(amount)
    if nature in ("expense", "outflow"):
        return abs(amount)
    return amount


@dataclass
class ResolvedRefs:
    account: Account | None = None
    category: Category | None = None
    merchant: Merchant | None = None
    tags: list[Tag] | None = None


@dataclass
class RefIndex:
    """The household's records named by a batch of requests, loaded in one query per kind."""

    accounts: dict[uuid.UUID, Account] = dataclasses.field(default_factory=dict)
    categories: dict[uuid.UUID, Category] = dataclasses.field(default_factory=dict)
    merchants: dict[uuid.UUID, Merchant] = dataclasses.field(default_factory=dict)
    tags: dict[uuid.UUID, Tag] = dataclasses.field(default_factory=dict)


def transaction_refs_load(*, family: Family, items: Iterable[dict[str, Any]]) -> RefIndex:
    """Load, for a whole batch, every account, category, merchant and tag the items name."""
    wanted: dict[str, set[uuid.UUID]] = {k: set() for k in ("account", "category", "merchant")}
    tag_ids: set[uuid.UUID] = set()
    for data in items:
        for kind in wanted:
            if data.get(f"{kind}_id") is not None:
                wanted[kind].add(data[f"{kind}_id"])
        tag_ids.update(data.get("tag_ids") or ())
    index = RefIndex()
    for kind, model, target in (
        ("account", Account, index.accounts),
        ("category", Category, index.categories),
        ("merchant", Merchant, index.merchants),
    ):
        if wanted[kind]:
            target.update(
                (o.pk, o) for o in model.objects.filter(family=family, pk__in=wanted[kind])
            )
    if tag_ids:
        index.tags.update((t.pk, t) for t in Tag.objects.filter(family=family, pk__in=tag_ids))
    return index


def transaction_refs_pick(
    *, index: RefIndex, data: dict[str, Any]
) -> tuple[ResolvedRefs, list[str]]:
    """The records one item names, and one "field: problem" per unknown or foreign id."""
    errors: list[str] = []
    refs = ResolvedRefs()
    for kind, table in (
        ("account", index.accounts),
        ("category", index.categories),
        ("merchant", index.merchants),
    ):
        if data.get(f"{kind}_id") is not None:
            found = table.get(data[f"{kind}_id"])
            if found is None:
                errors.append(f"{kind}_id: {NOT_IN_HOUSEHOLD}")
            setattr(refs, kind, found)
    if "tag_ids" in data:
        wanted = list(dict.fromkeys(data["tag_ids"]))
        refs.tags = [index.tags[t] for t in wanted if t in index.tags]
        missing = [t for t in wanted if t not in index.tags]
        errors.extend(f"tag_ids: {t} {NOT_IN_HOUSEHOLD}" for t in sorted(map(str, missing)))
    return refs, errors


def transaction_refs_resolve(*, family: Family, data: dict[str, Any]) -> ResolvedRefs:
    """Load the records a request names; any that is unknown or foreign is a 422 naming it."""
    refs, errors = transaction_refs_pick(
        index=transaction_refs_load(family=family, items=[data]), data=data
    )
    if errors:
        raise ValidationFailed(errors)
    return refs


_RELATED = ("family", "account", "category", "merchant")


def transaction_build(*, family: Family, data: dict[str, Any], refs: ResolvedRefs) -> Transaction:
    """An unsaved Transaction from validated request data (used by single and bulk create).

    Built from positional values, as the ORM builds rows it reads (keyword construction costs
    ~20 us a row, a tenth of a bulk request), its related records cached as `select_related`
    would."""
    external_id = data.get("external_id") or None
    related = dict(zip(_RELATED, (family, refs.account, refs.category, refs.merchant), strict=True))
    given = {
        "family_id": family.pk,
        "account_id": refs.account.pk if refs.account is not None else None,
        "date": data["date"],
        "amount": signed_amount(data["amount"], data.get("nature")),
        "currency": data.get("currency") or family.currency,
        "name": data["name"],
        "notes": data.get("notes"),
        "external_id": external_id,
        "source": (data.get("source") or DEFAULT_SOURCE) if external_id else None,
        "category_id": refs.category.pk if refs.category is not None else None,
        "merchant_id": refs.merchant.pk if refs.merchant is not None else None,
        "excluded": data.get("excluded", False),
    }
    meta = Transaction._meta
    txn = Transaction(
        *(given[f.attname] if f.attname in given else f.get_default() for f in meta.concrete_fields)
    )
    for name, record in related.items():
        meta.get_field(name).set_cached_value(txn, record)
    return txn


IdempotencyKey = tuple[uuid.UUID, str, str]


def _key(txn: Transaction) -> IdempotencyKey | None:
    return (txn.account_id, txn.source, txn.external_id) if txn.external_id else None


def _stored_by_key(keys: set[IdempotencyKey]) -> dict[IdempotencyKey, Transaction]:
    if not keys:
        return {}
    candidates = Transaction.objects.filter(
        account_id__in={k[0] for k in keys},
        source__in={k[1] for k in keys},
        external_id__in={k[2] for k in keys},
    )
    return {k: t for t in candidates if (k := _key(t)) in keys}


def _columns() -> list[models.Field]:
    """Every stored column of a transaction, the primary key first."""
    meta = Transaction._meta
    return [meta.pk, *(f for f in meta.concrete_fields if not f.primary_key)]


def _insert(txns: list[Transaction], *, keyed: bool) -> set[uuid.UUID]:
    """Write built rows straight to the table (no per-object ORM preparation: a bulk request
    is most of its own cost otherwise); return the keys of those stored (all, unless `keyed`
    rows lost their idempotency key to a concurrent writer)."""
    now = timezone.now()
    for txn in txns:
        txn.created_at = txn.updated_at = now
    fields = _columns()
    names = [f.name for f in fields]
    rows = [tuple(getattr(txn, f.attname) for f in fields) for txn in txns]
    if keyed:
        return fast_insert_new(Transaction, names, rows)
    fast_insert(Transaction, names, rows)
    return {txn.pk for txn in txns}


def transactions_write(txns: list[Transaction]) -> None:
    """Write built transactions as they are, in one batch (COPY or executemany), for a caller
    that has already read which keys are new (a sync, inside its transaction): a key stored
    meanwhile fails the whole write on the unique constraint, as `bulk_create` would. Without
    the ORM's per-value preparation: that was half of a first sync's time. The caller runs
    `ledger_changed`."""
    _insert(txns, keyed=False)
    for txn in txns:
        txn._state.adding = False


def transactions_insert(
    rows: Sequence[tuple[Transaction, list[Tag] | None]],
) -> list[tuple[Transaction, bool]]:
    """Insert built transactions; return (row, created) for each, in order.

    Idempotent by (account, source, external_id): a key already stored, or seen earlier in
    `rows`, yields the stored row with created=False. The database's unique constraint decides
    (INSERT ... ON CONFLICT DO NOTHING); only a key lost to a racing writer is read back.
    Created rows are the built instances, now saved (`created_at`/`updated_at` set).
    Call inside a transaction; the caller runs `ledger_changed` for the created rows."""
    keyed = {key for txn, _tags in rows if (key := _key(txn)) is not None}
    # Keys already stored are answered without an insert (the cheap path of a re-sync) ...
    stored = _stored_by_key(keyed)
    plain: list[Transaction] = []
    keyed_new: list[Transaction] = []
    inserted_keys: set[IdempotencyKey] = set()
    for txn, _tags in rows:
        key = _key(txn)
        if key is None:
            plain.append(txn)
        elif key not in stored and key not in inserted_keys:
            inserted_keys.add(key)
            keyed_new.append(txn)
    if plain:  # no key, no conflict to ignore: any error is a real one
        _insert(plain, keyed=False)
    if keyed_new:
        # ... and the constraint decides the rest: a key lost to a racing writer is re-read.
        won = _insert(keyed_new, keyed=True)
        for txn in keyed_new:
            if txn.pk in won:
                txn._state.adding = False
                stored[_key(txn)] = txn
        stored.update(_stored_by_key({_key(t) for t in keyed_new if t.pk not in won}))
    for txn in plain:
        txn._state.adding = False
    results: list[tuple[Transaction, bool]] = []
    through: list[Any] = []
    for txn, tags in rows:
        key = _key(txn)
        winner = stored.get(key) if key is not None else txn
        if winner is None:  # pragma: no cover - the row was deleted between insert and re-read
            raise IntegrityError(f"transaction {key} vanished during insert")
        created = winner.pk == txn.pk
        if created and tags:
            through.extend(
                Transaction.tags.through(transaction_id=txn.pk, tag_id=tag.pk) for tag in tags
            )
        results.append((txn if created else winner, created))
    if through:
        Transaction.tags.through.objects.bulk_create(through)
    return results


def transaction_create(*, family: Family, data: dict[str, Any]) -> tuple[Transaction, bool]:
    """Create a transaction, or return the existing one for its (account, source, external_id).

    Returns (transaction, created). The unique constraint decides between racing requests."""
    refs = transaction_refs_resolve(family=family, data=data)
    txn = transaction_build(family=family, data=data, refs=refs)
    with transaction.atomic():
        [(txn, created)] = transactions_insert([(txn, refs.tags)])
        if created:
            ledger_changed(family=family, account_dates={txn.account_id: txn.date}, created=[txn])
    return txn, created


_PLAIN_FIELDS = ("date", "name", "notes", "currency", "excluded")


@transaction.atomic
def transaction_update(*, txn: Transaction, data: dict[str, Any]) -> Transaction:
    family = txn.family
    refs = transaction_refs_resolve(family=family, data=data)
    changed: dict[uuid.UUID, Any] = {}
    merge_account_dates(changed, txn.account_id, txn.date)
    for field in _PLAIN_FIELDS:
        if field in data:
            setattr(txn, field, data[field])
    if refs.account is not None:
        txn.account = refs.account
    if "amount" in data:
        txn.amount = signed_amount(data["amount"], data.get("nature"))
    elif "nature" in data:
        txn.amount = signed_amount(txn.amount, data["nature"])
    if "category_id" in data:
        txn.category = refs.category
    if "merchant_id" in data:
        txn.merchant = refs.merchant
    if "external_id" in data:
        txn.external_id = data["external_id"] or None
        txn.source = (
            (data.get("source") or txn.source or DEFAULT_SOURCE) if txn.external_id else None
        )
    elif data.get("source") and txn.external_id:
        txn.source = data["source"]
    try:
        with transaction.atomic():
            txn.save()
    except IntegrityError:
        raise ValidationFailed(
            ["external_id: another transaction of this account already has it"]
        ) from None
    if refs.tags is not None:
        txn.tags.set(refs.tags)
    merge_account_dates(changed, txn.account_id, txn.date)
    ledger_changed(family=family, account_dates=changed)
    return txn


@transaction.atomic
def transaction_delete(*, txn: Transaction) -> None:
    family, account_id, date = txn.family, txn.account_id, txn.date
    txn.delete()
    ledger_changed(family=family, account_dates={account_id: date})
