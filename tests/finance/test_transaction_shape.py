"""A transaction's shape is declared once, by TransactionSerializer's fields: the hand-written
`transaction_representation` that lists and writes answer with (finance/serializers/fast.py)
must equal DRF's rendering of those fields, key order included, for every combination of
null and non-null relations, tags, transfer legs and currency precisions."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from finance.models import Account, Category, Family, Merchant, Tag, Transaction, Transfer
from finance.selectors.transactions import transaction_base_queryset
from finance.serializers.fast import transaction_representation
from finance.serializers.transactions import TransactionSerializer
from tests import factories as f

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "15"))
CURRENCIES = {0: ("JPY", "KRW"), 2: ("USD", "EUR"), 3: ("BHD", "KWD")}
TRANSFER_LEGS = (None, "inflow", "outflow")
COMBINATIONS = list(
    itertools.product(
        (False, True),  # category
        (False, True),  # merchant
        (0, 1, 3),  # tags
        TRANSFER_LEGS,
        sorted(CURRENCIES),  # the currency's decimals
    )
)


def declared(txn: Transaction) -> dict[str, Any]:
    """DRF's own rendering of TransactionSerializer's declared fields (not its fast path)."""
    return serializers.Serializer.to_representation(TransactionSerializer(), txn)


def assert_same(txn: Transaction) -> None:
    fast, slow = transaction_representation(txn), declared(txn)
    # JSON text: the same keys in the same order, the same values and types, at every level
    assert json.dumps(fast) == json.dumps(slow), (fast, slow)


texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
amounts = st.decimals(
    min_value=Decimal("-999999999.9999"), max_value=Decimal("999999999.9999"), places=4
)
moments = st.datetimes(
    min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2100, 1, 1), timezones=st.just(dt.UTC)
)


def _set_cached(txn: Transaction, accessor: str, value: Any) -> None:
    """The reverse one-to-one as a prefetch leaves it (None: no transfer on that side)."""
    Transaction._meta.get_field(accessor).set_cached_value(txn, value)


@st.composite
def transactions(draw: Any, combination: tuple[Any, ...]) -> Transaction:
    """An unsaved transaction with its relations cached, as the list's queryset loads them."""
    has_category, has_merchant, tag_count, leg, decimals = combination
    currency = draw(st.sampled_from(CURRENCIES[decimals]))
    family = Family(name="Household", currency="USD")

    def account() -> Account:
        return Account(
            family=family,
            name=draw(texts),
            account_type=draw(st.sampled_from(Account.Type.values)),
            status=draw(st.sampled_from(Account.Status.values)),
            currency=currency,
        )

    txn = Transaction(
        family=family,
        account=account(),
        date=draw(st.dates(dt.date(1990, 1, 1), dt.date(2100, 12, 31))),
        amount=draw(amounts),
        currency=currency,
        name=draw(texts),
        notes=draw(st.none() | st.just("") | texts),
        external_id=draw(st.none() | texts),
        source=draw(st.none() | st.sampled_from(["api", "import", "lunchflow"])),
        kind=draw(st.sampled_from(Transaction.Kind.values)),
        pending=draw(st.booleans()),
        excluded=draw(st.booleans()),
    )
    txn.created_at, txn.updated_at = draw(moments), draw(moments)
    txn.category = (
        Category(family=family, name=draw(texts), color="#336699", icon=draw(st.just("") | texts))
        if has_category
        else None
    )
    txn.merchant = Merchant(family=family, name=draw(texts)) if has_merchant else None
    tags = [Tag(family=family, name=draw(texts), color="#aa3355") for _ in range(tag_count)]
    setattr(txn, Transaction.PREFETCHED_TAGS, tags)
    transfer = None
    if leg is not None:
        other = Transaction(family=family, account=account(), amount=-txn.amount, currency=currency)
        inflow, outflow = (txn, other) if leg == "inflow" else (other, txn)
        transfer = Transfer(
            family=family,
            inflow_transaction=inflow,
            outflow_transaction=outflow,
            status=draw(st.sampled_from(Transfer.Status.values)),
        )
    _set_cached(txn, "transfer_as_inflow", transfer if leg == "inflow" else None)
    _set_cached(txn, "transfer_as_outflow", transfer if leg == "outflow" else None)
    return txn


def _name(combination: tuple[Any, ...]) -> str:
    category, merchant, tags, leg, decimals = combination
    return f"category={category}-merchant={merchant}-tags={tags}-leg={leg}-decimals={decimals}"


@pytest.mark.parametrize("combination", COMBINATIONS, ids=[_name(c) for c in COMBINATIONS])
def test_the_fast_representation_is_the_declared_one(combination):
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(transactions(combination))
    def check(txn: Transaction) -> None:
        assert_same(txn)

    check()


@settings(max_examples=5, deadline=None)
@given(transactions((True, False, 1, "outflow", 2)))
def test_the_comparison_can_fail(txn):
    """A renamed transaction no longer matches the earlier declared rendering."""
    declared_before = declared(txn)
    txn.name = txn.name + "!"
    with pytest.raises(AssertionError):
        assert json.dumps(transaction_representation(txn)) == json.dumps(declared_before)


@pytest.mark.django_db
def test_rows_read_by_the_list_query_answer_the_declared_shape(django_assert_max_num_queries):
    """The same over real rows, as the list's queryset reads them (tags and transfer legs
    prefetched, relations joined): every combination in one household."""
    family = f.FamilyFactory()
    rows = []
    for has_category, has_merchant, tag_count, leg, decimals in COMBINATIONS:
        currency = CURRENCIES[decimals][0]
        account = f.AccountFactory(family=family, currency=currency)
        txn = f.TransactionFactory(
            account=account,
            amount=Decimal("-12.3456") if leg == "inflow" else Decimal("12.3456"),
            category=f.CategoryFactory(family=family) if has_category else None,
            merchant=f.MerchantFactory(family=family) if has_merchant else None,
            notes=None if tag_count else "a note",
            external_id=str(uuid.uuid4()) if has_merchant else None,
            source="api" if has_merchant else None,
        )
        txn.tags.set([f.TagFactory(family=family) for _ in range(tag_count)])
        if leg is not None:
            other = f.TransactionFactory(
                account=f.AccountFactory(family=family, currency=currency), amount=-txn.amount
            )
            inflow, outflow = (txn, other) if leg == "inflow" else (other, txn)
            Transfer.objects.create(
                family=family, inflow_transaction=inflow, outflow_transaction=outflow
            )
        rows.append(txn.pk)
    loaded = list(transaction_base_queryset(family=family).filter(pk__in=rows))
    assert len(loaded) == len(COMBINATIONS)
    with django_assert_max_num_queries(0):
        for txn in loaded:
            assert_same(txn)
