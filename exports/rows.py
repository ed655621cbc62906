"""A household's transactions for the archive, read without building a model per row.

The archive writes each transaction with the API's own fast shape
(`finance.serializers.fast.transaction_representation`), which reads a transaction's fields,
its account, category, merchant, prefetched tags and transfer. Building those as ORM models
(a transaction, its relations and prefetches) was most of an export's time, so rows are read
as plain values, a chunk at a time, and handed to that same function as light records: the
household's accounts, categories, merchants and tags once (a household has few), each chunk's
tag links and transfers by one query each."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from django.db.models import Q

from finance.models import Account, Category, Family, Merchant, Tag, Transaction, Transfer

FIELDS = (
    "id", "account_id", "date", "amount", "currency", "name", "notes", "external_id", "source",
    "category_id", "merchant_id", "kind", "pending", "excluded", "excluded_by_sync",
    "pending_settled", "provider_snapshot", "rule_changes", "edited_fields", "created_at",
    "updated_at",
)  # fmt: skip


class Row:
    """What `transaction_representation` and the archive read of a transaction."""

    __slots__ = (*FIELDS, "account", "category", "merchant", Transaction.PREFETCHED_TAGS,
                 "transfer_as_inflow", "transfer_as_outflow")  # fmt: skip

    classification = Transaction.classification
    rule_ids = Transaction.rule_ids


class _Leg:
    __slots__ = ("account",)

    def __init__(self, account: Any) -> None:
        self.account = account


class _Transfer:
    __slots__ = ("id", "inflow_transaction", "outflow_transaction", "status")


def transaction_rows(*, family: Family, chunk: int) -> Iterator[Row]:
    accounts = {a.pk: a for a in Account.objects.filter(family=family)}
    categories = {c.pk: c for c in Category.objects.filter(family=family)}
    merchants = {m.pk: m for m in Merchant.objects.filter(family=family)}
    tags = {t.pk: t for t in Tag.objects.filter(family=family)}
    through = Transaction.tags.through
    queryset = (
        Transaction.objects.filter(family=family)
        .order_by("date", "created_at", "id")
        .values_list(*FIELDS)
    )
    batch: list[Row] = []
    for values in queryset.iterator(chunk_size=chunk):
        row = Row()
        for name, value in zip(FIELDS, values, strict=True):
            setattr(row, name, value)
        row.account = accounts[row.account_id]
        row.category = categories.get(row.category_id)
        row.merchant = merchants.get(row.merchant_id)
        batch.append(row)
        if len(batch) >= chunk:
            yield from _complete(batch, tags, accounts, through)
            batch = []
    yield from _complete(batch, tags, accounts, through)


def _complete(batch: list[Row], tags: dict, accounts: dict, through: Any) -> Iterator[Row]:
    """The chunk's tags (in name order, as the API lists them) and transfers."""
    ids = [row.id for row in batch]
    by_txn: dict[uuid.UUID, list[Tag]] = {}
    for txn_id, tag_id in through.objects.filter(transaction_id__in=ids).values_list(
        "transaction_id", "tag_id"
    ):
        by_txn.setdefault(txn_id, []).append(tags[tag_id])
    pairs: dict[uuid.UUID, tuple[str, _Transfer]] = {}
    legs = Transfer.objects.filter(
        Q(inflow_transaction_id__in=ids) | Q(outflow_transaction_id__in=ids)
    ).values_list(
        "id", "status", "inflow_transaction_id", "inflow_transaction__account_id",
        "outflow_transaction_id", "outflow_transaction__account_id",
    )  # fmt: skip
    for pk, status, inflow, inflow_account, outflow, outflow_account in legs:
        transfer = _Transfer()
        transfer.id, transfer.status = pk, status
        transfer.inflow_transaction = _Leg(accounts.get(inflow_account))
        transfer.outflow_transaction = _Leg(accounts.get(outflow_account))
        pairs[inflow] = ("transfer_as_inflow", transfer)
        pairs[outflow] = ("transfer_as_outflow", transfer)
    for row in batch:
        setattr(row, Transaction.PREFETCHED_TAGS, sorted(by_txn.get(row.id, ()), key=_tag_order))
        row.transfer_as_inflow = row.transfer_as_outflow = None
        side = pairs.get(row.id)
        if side is not None:
            setattr(row, side[0], side[1])
        yield row


def _tag_order(tag: Tag) -> tuple[str, str]:
    return (tag.name, str(tag.pk))
