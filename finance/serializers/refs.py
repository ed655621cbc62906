"""Small nested shapes that several resources embed (API document part 2), declared once.

Each reference is a serializer whose declared fields are the shape (they give the OpenAPI
component); its fast function, which the hand-written representations call, is derived from
those fields (`ref_function`): plain attributes read by name, uuids as text. Trades, holdings
and transfer legs embed the same references as transactions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rest_framework import serializers

from finance.models import Transaction
from finance.models.ledger import transfer_relations
from finance.serializers.fields import MoneyTextField

Ref = Callable[[Any], dict[str, Any] | None]


def ref_function(serializer: type[serializers.Serializer]) -> Ref:
    """The fast representation of a reference serializer, read off its declared fields: each
    field's attribute by name, uuids as text; None for no record. The fields must be plain
    (no `source`, no nesting): tests/finance/test_output_shapes.py holds that and the equality.

    The function is generated as one dict display, as `dataclasses` generates its methods:
    references are rendered several times per row of every list page."""
    items = []
    for name, field in serializer._declared_fields.items():  # type: ignore[attr-defined]
        if not name.isidentifier():
            raise ValueError(f"{serializer.__name__}.{name}: not a plain attribute")
        value = f"record.{name}"
        items.append(
            f"{name!r}: str({value})"
            if isinstance(field, serializers.UUIDField)
            else f"{name!r}: {value}"
        )
    source = (
        "def ref(record):\n"
        "    if record is None:\n"
        "        return None\n"
        f"    return {{{', '.join(items)}}}\n"
    )
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # noqa: S102 - the source is built from declared field names only
    ref = namespace["ref"]
    ref.__qualname__ = ref.__name__ = f"{serializer.__name__}_ref"
    return ref


class AccountBriefRefSerializer(serializers.Serializer):
    """An account as trades' create answer, holdings and transfer legs name it."""

    id = serializers.UUIDField()
    name = serializers.CharField()
    account_type = serializers.CharField()

    class Meta:
        ref_name = "AccountBriefRef"


class AccountRefSerializer(AccountBriefRefSerializer):
    """An account as transactions and trades name it."""

    status = serializers.CharField()

    class Meta:
        ref_name = "AccountRef"


class CategoryBriefRefSerializer(serializers.Serializer):
    """A category as trades name it (API document part 2: id and name)."""

    id = serializers.UUIDField()
    name = serializers.CharField()

    class Meta:
        ref_name = "CategoryBriefRef"


class CategoryRefSerializer(CategoryBriefRefSerializer):
    """A category as transactions name it."""

    color = serializers.CharField()
    icon = serializers.CharField()

    class Meta:
        ref_name = "CategoryRef"


class MerchantRefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()

    class Meta:
        ref_name = "MerchantRef"


def transaction_tags(txn: Transaction) -> Any:
    """The prefetched tags without building a related manager per row (a third of the cost)."""
    tags = getattr(txn, Transaction.PREFETCHED_TAGS, None)
    return txn.tags.all() if tags is None else tags


class TransactionTagsSerializer(serializers.ListSerializer):
    """A transaction's tags, from the prefetched list when the query prefetched them."""

    def get_attribute(self, instance: Transaction) -> Any:
        return transaction_tags(instance)


class TagRefSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    color = serializers.CharField()

    class Meta:
        ref_name = "TagRef"
        list_serializer_class = TransactionTagsSerializer


@dataclass(frozen=True)
class TransferSide:
    """The transfer a transaction is a leg of, seen from that leg."""

    id: Any
    amount: Decimal  # what the leg moved, unsigned
    currency: str
    status: str
    other_account: Any


_UNREAD = object()


def _leg_of(txn: Transaction, relation: Any) -> Any:
    """The transfer `txn` is this leg of, or None. A row whose relation was read (a join or a
    bulk's "no transfer") answers from its cache: the descriptor raises for a cached None,
    and raising and catching it twice a row was a visible share of a 1,000-row response."""
    state = getattr(txn, "_state", None)  # the export's rows are plain records
    cached = _UNREAD if state is None else state.fields_cache.get(relation.cache_name, _UNREAD)
    return getattr(txn, relation.name, None) if cached is _UNREAD else cached


def transfer_side(txn: Transaction) -> TransferSide | None:
    as_inflow, as_outflow = transfer_relations()
    transfer = _leg_of(txn, as_inflow)
    other = None
    if transfer is not None:
        other = transfer.outflow_transaction
    else:
        transfer = _leg_of(txn, as_outflow)
        if transfer is not None:
            other = transfer.inflow_transaction
    if transfer is None:
        return None
    account = other.account if other is not None else None
    return TransferSide(transfer.id, abs(txn.amount), txn.currency, transfer.status, account)


class TransferRefSerializer(serializers.Serializer):
    """A transaction's `transfer`: read from the transaction itself (`transfer_side`)."""

    id = serializers.UUIDField()
    amount = MoneyTextField()
    currency = serializers.CharField()
    status = serializers.CharField()
    other_account = AccountRefSerializer(allow_null=True)

    class Meta:
        ref_name = "TransferRef"
        description = (
            "The transfer this transaction is a leg of: its id and status, the amount moved "
            "(unsigned) and the other leg's account."
        )

    def get_attribute(self, instance: Transaction) -> TransferSide | None:
        return transfer_side(instance)


account_brief_ref = ref_function(AccountBriefRefSerializer)
account_ref = ref_function(AccountRefSerializer)
category_brief_ref = ref_function(CategoryBriefRefSerializer)
category_ref = ref_function(CategoryRefSerializer)
merchant_ref = ref_function(MerchantRefSerializer)
tag_ref = ref_function(TagRefSerializer)
