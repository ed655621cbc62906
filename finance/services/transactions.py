"""Writes to transactions: create (idempotent by external_id), update, delete, each through
one ledger batch. Callers pass the fields as typed keyword arguments (`TransactionFields`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NotRequired, TypedDict, Unpack

from django.db import IntegrityError, transaction
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init

from core.errors import NotFound, ValidationFailed
from finance.ledger import Was, ledger_batch
from finance.models import Account, Category, Family, Merchant, Tag, Transaction
from finance.models.ledger import transfer_relations

NOT_IN_HOUSEHOLD = "does not exist in this household"
ALREADY_DELETED = "The transaction was deleted by another request."


class TransactionFields(TypedDict, total=False):
    """A transaction's writable fields, as the API and the admin give them."""

    account_id: uuid.UUID
    date: dt.date
    amount: Decimal
    name: str
    nature: NotRequired[str | None]
    currency: NotRequired[str | None]
    notes: NotRequired[str | None]
    category_id: NotRequired[uuid.UUID | None]
    merchant_id: NotRequired[uuid.UUID | None]
    tag_ids: NotRequired[list[uuid.UUID]]
    external_id: NotRequired[str | None]
    source: NotRequired[str | None]
    excluded: NotRequired[bool]
    pending: NotRequired[bool]
    kind: NotRequired[str]


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


def transaction_refs_load(*, family: Family, items: Iterable[TransactionFields]) -> RefIndex:
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
            # Unordered: the records go into a dict, and resolving the models' default
            # ordering (name, id) was a tenth of compiling each query.
            found = model.objects.filter(family=family, pk__in=wanted[kind]).order_by()
            target.update((o.pk, o) for o in found)
    if tag_ids:
        found = Tag.objects.filter(family=family, pk__in=tag_ids).order_by()
        index.tags.update((t.pk, t) for t in found)
    return index


def transaction_refs_pick(
    *, index: RefIndex, data: TransactionFields
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


def transaction_refs_resolve(*, family: Family, data: TransactionFields) -> ResolvedRefs:
    """Load the records a request names; any that is unknown or foreign is a 422 naming it."""
    refs, errors = transaction_refs_pick(
        index=transaction_refs_load(family=family, items=[data]), data=data
    )
    if errors:
        raise ValidationFailed(errors)
    return refs


_RELATED = ("family", "account", "category", "merchant")


@functools.cache
def _build_plan() -> tuple[dict[str, int], list[Any], list[tuple[int, Any]], list[Any]]:
    """Where each column sits in a row's positional values, the columns' default values,
    those made per row (a fresh key), and the relations cached on a built row."""
    fields = Transaction._meta.concrete_fields
    at = {f.attname: i for i, f in enumerate(fields)}
    defaults: list[Any] = []
    per_row: list[tuple[int, Any]] = []
    for i, field in enumerate(fields):
        if field.has_default() and callable(field.default):
            per_row.append((i, field.default))
            defaults.append(None)
        else:
            defaults.append(field.get_default())
    relations = [Transaction._meta.get_field(name) for name in _RELATED]
    return at, defaults, per_row, relations


@functools.cache
def _attnames() -> tuple[str, ...]:
    return tuple(f.attname for f in Transaction._meta.concrete_fields)


def _row(values: list[Any]) -> Transaction:
    """`Transaction(*values)` (every concrete field, in order) with the instance's attributes
    set at once: the constructor sets them one by one, each foreign key through its
    descriptor, a fifth of building a bulk's rows. The constructor itself whenever anything
    listens to its signals for transactions."""
    if pre_init.has_listeners(Transaction) or post_init.has_listeners(Transaction):
        return Transaction(*values)
    txn = Transaction.__new__(Transaction)
    txn._state = ModelState()
    txn.__dict__.update(zip(_attnames(), values, strict=True))
    return txn


def transaction_build(
    *, family: Family, data: TransactionFields, refs: ResolvedRefs
) -> Transaction:
    """An unsaved Transaction from validated request data (used by single and bulk create).

    Built from positional values, as the ORM builds rows it reads (keyword construction is a
    visible share of a bulk request), its related records cached as `select_related` would."""
    at, defaults, per_row, relations = _build_plan()
    external_id = data.get("external_id") or None
    values = defaults.copy()
    for i, make in per_row:
        values[i] = make()
    values[at["family_id"]] = family.pk
    values[at["account_id"]] = refs.account.pk if refs.account is not None else None
    values[at["date"]] = data["date"]
    values[at["amount"]] = signed_amount(data["amount"], data.get("nature"))
    values[at["currency"]] = data.get("currency") or family.currency
    values[at["name"]] = data["name"]
    values[at["notes"]] = data.get("notes")
    values[at["external_id"]] = external_id
    values[at["source"]] = (data.get("source") or DEFAULT_SOURCE) if external_id else None
    values[at["category_id"]] = refs.category.pk if refs.category is not None else None
    values[at["merchant_id"]] = refs.merchant.pk if refs.merchant is not None else None
    values[at["excluded"]] = data.get("excluded", False)
    values[at["pending"]] = data.get("pending", False)
    values[at["kind"]] = data.get("kind") or Transaction.Kind.STANDARD
    txn = _row(values)
    for relation, record in zip(
        relations, (family, refs.account, refs.category, refs.merchant), strict=True
    ):
        relation.set_cached_value(txn, record)
    return txn


def transaction_as_written(txn: Transaction, tags: list[Tag] | None) -> None:
    """Give a just-written row what a re-read would (its tags in their list order, no
    transfer), so serialising it costs no query, and mark it so (`Transaction.AS_WRITTEN`).
    Its account, category and merchant are the household's records the batch loaded (or the
    rules set). Only for a row created by a batch that paired nothing."""
    ordered = sorted(tags or (), key=lambda t: (t.name, str(t.pk)))
    setattr(txn, Transaction.PREFETCHED_TAGS, ordered)
    for relation in transfer_relations():
        relation.set_cached_value(txn, None)
    setattr(txn, Transaction.AS_WRITTEN, True)


def transaction_create(
    *, family: Family, **fields: Unpack[TransactionFields]
) -> tuple[Transaction, bool]:
    """Create a transaction, or return the existing one for its (account, source, external_id).

    Returns (transaction, created). The unique constraint decides between racing requests.
    A created row that transfer matching left alone comes back as written, ready to answer
    (`transaction_as_written`); the stored row of an existing key is for the caller to read."""
    data: dict[str, Any] = dict(fields)
    refs = transaction_refs_resolve(family=family, data=data)
    rows = [(transaction_build(family=family, data=data, refs=refs), refs.tags)]
    with ledger_batch(family=family) as batch:
        [(txn, created)] = batch.add(rows)  # the rules may replace the row's tags in `rows`
    if created and not batch.paired:
        transaction_as_written(txn, rows[0][1])
    return txn, created


_PLAIN_FIELDS = ("date", "name", "notes", "currency", "excluded", "pending", "kind")
# Request fields -> the transaction fields rules set: an edit of one is the household's own,
# which no rule changes again (decisions.md "Rules").
_RULE_FIELDS = {
    "name": "name",
    "notes": "notes",
    "category_id": "category",
    "merchant_id": "merchant",
    "tag_ids": "tags",
    "excluded": "excluded",
}


def transaction_update(*, txn: Transaction, **fields: Unpack[TransactionFields]) -> Transaction:
    """Change the fields given (a PATCH: the others stay). 404 when a racing request deleted
    the row first."""
    data: dict[str, Any] = dict(fields)
    family = txn.family
    refs = transaction_refs_resolve(family=family, data=data)
    for field in _PLAIN_FIELDS:
        if field in data:
            setattr(txn, field, data[field])
    if "excluded" in data:  # the household's say: a sync never lifts it (decisions.md)
        txn.excluded_by_sync = False
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
    with ledger_batch(family=family) as batch:
        # The row as stored, read under its lock: where its flow was (balances move in place).
        stored = (
            Transaction.objects.select_for_update().filter(pk=txn.pk).values_list(*Was._fields)
        ).first()
        if stored is None:
            raise NotFound(ALREADY_DELETED)
        was = Was(*stored)
        try:
            with transaction.atomic():
                batch.update(
                    txn, was=was, edited=[_RULE_FIELDS[k] for k in data if k in _RULE_FIELDS]
                )
        except IntegrityError:
            raise ValidationFailed(
                ["external_id: another transaction of this account already has it"]
            ) from None
        if refs.tags is not None:
            batch.set_tags(txn, refs.tags)
    return txn


def transaction_delete(*, txn: Transaction) -> None:
    """Delete one transaction. Of two racing deletes, the second is told the row is gone."""
    with ledger_batch(family=txn.family) as batch:
        if not batch.delete(Transaction.objects.filter(pk=txn.pk)):
            raise NotFound(ALREADY_DELETED)
