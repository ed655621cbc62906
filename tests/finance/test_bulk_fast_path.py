"""The bulk create's fast path for well-formed items (finance/serializers/fast.py) must never
decide differently from the serializer: whatever it accepts, TransactionFieldsSerializer
accepts with the same validated fields; whatever it is unsure of goes to the serializer."""

from __future__ import annotations

import os
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from finance.serializers.fast import transaction_fields_fast
from finance.serializers.transactions import (
    TransactionFieldsSerializer,
    transaction_bulk_items_validate,
)

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "1000"))
ID = "6f1c1a52-3f0e-4a4b-9d55-2f3a8f7b0c11"

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
uuids = st.one_of(
    st.uuids().map(str),
    st.uuids().map(lambda u: str(u).upper()),
    st.uuids().map(lambda u: u.hex),
    st.uuids().map(lambda u: "{" + str(u) + "}"),
    st.just(ID[:-1]),
    st.just(f" {ID}"),
    st.integers(0, 2**128 - 1),
)
SPECIAL_TEXTS = ["", "  ", "Coffee", " padded ", "caf\u00e9", "a\x00b", "\ud800x", "\u00df"]


def texts(limit: int | None = None):
    """Any text, awkward characters, and lengths right at and across the field's limit."""
    edges = [
        st.sampled_from(["x" * (limit + d) for d in (-1, 0, 1)] + [f" {'x' * limit} "])
        for _ in range(3)
        if limit
    ]
    return st.one_of(
        *edges,
        st.text(max_size=20),
        st.text(alphabet=st.characters(categories=["Cs", "Cc", "Zs", "Lu"]), max_size=5),
        st.sampled_from(SPECIAL_TEXTS),
        st.integers(),
    )


FIELDS = {
    "account_id": uuids,
    "date": st.one_of(
        st.dates().map(str),
        st.sampled_from(["2024-02-30", "2024-2-01", "20240201", " 2024-02-01", "2024-02-01T00"]),
    ),
    "amount": st.one_of(
        st.decimals(allow_nan=True, allow_infinity=True).map(str),
        st.integers(-(10**16), 10**16),
        st.sampled_from(
            ["1e2", "1E-5", "-0", "0.00001", " 12.5 ", "12.34567", "999999999999999.9999"]
        ),
        st.floats(),
    ),
    "name": texts(255),
    "description": texts(255),
    "notes": texts(),
    "currency": st.sampled_from(["USD", "usd", " eur ", "ZZZ", "US", "USDD", "", "ß", "GBP"]),
    "category_id": uuids,
    "merchant_id": uuids,
    "nature": st.sampled_from(["income", "expense", "inflow", "outflow", "INCOME", "", "x"]),
    "external_id": texts(255),
    "source": texts(64),
    "tag_ids": st.one_of(
        st.lists(uuids, max_size=3),
        st.lists(st.just(ID), min_size=100, max_size=101),
        st.text(max_size=3),
    ),
    "excluded": st.one_of(st.booleans(), st.sampled_from(["true", 1, 0, "no"])),
    "unknown": st.integers(),
}
WELL_FORMED = {"account_id": ID, "date": "2024-05-02", "amount": "25", "name": "Coffee"}


@st.composite
def items(draw, *, junk_too: bool):
    """A well-formed item with one to three fields replaced, left out or added: each of the
    fast path's checks is reached with values near and across its edges."""
    item = dict(WELL_FORMED)
    if draw(st.booleans()):
        item.update(external_id="bank-1", source="bank")
    for name in draw(st.lists(st.sampled_from(sorted(FIELDS)), min_size=1, max_size=3)):
        if draw(st.integers(0, 9)) == 0:
            item.pop(name, None)
        else:
            strategy = st.one_of(FIELDS[name], junk) if junk_too else FIELDS[name]
            item[name] = draw(strategy)
    return item


def serializer_result(item):
    try:
        return TransactionFieldsSerializer().run_validation(item)
    except serializers.ValidationError:
        return None


@settings(max_examples=EXAMPLES, deadline=None)
@given(items(junk_too=False))
def test_the_fast_path_accepts_only_what_the_serializer_accepts_alike(item):
    fast = transaction_fields_fast(item)
    if fast is not None:
        assert fast == serializer_result(item)


@settings(max_examples=EXAMPLES, deadline=None)
@given(items(junk_too=True))
def test_the_same_with_values_of_any_type(item):
    fast = transaction_fields_fast(item)
    if fast is not None:
        assert fast == serializer_result(item)


@pytest.mark.parametrize(
    "item",
    [
        {"account_id": ID, "date": "2024-05-02", "amount": "25", "name": "Coffee"},
        {
            "account_id": ID,
            "date": "2024-05-02",
            "amount": 25,
            "description": " Caf\u00e9 ",
            "notes": "",
            "currency": "eur",
            "category_id": None,
            "merchant_id": ID,
            "nature": "income",
            "external_id": "bank-1",
            "source": "bank",
            "tag_ids": [ID],
            "excluded": False,
        },
    ],
)
def test_well_formed_items_take_the_fast_path(item):
    """The path is taken (else a bulk request pays the serializer's cost for every item)."""
    fast = transaction_fields_fast(item)
    assert fast is not None
    assert fast == serializer_result(item)
    assert transaction_bulk_items_validate([item]) == [fast]


def test_what_it_is_unsure_of_gets_the_serializers_errors():
    item = {"account_id": str(uuid.uuid4()), "date": "2024-05-02", "amount": "1", "name": ""}
    assert transaction_fields_fast(item) is None
    assert transaction_bulk_items_validate([item]) == [["name: This field may not be blank."]]
