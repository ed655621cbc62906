"""finance.api.renderers.JSONRenderer writes the bytes DRF's JSONRenderer writes, faster; what
orjson would write another way or refuses goes through DRF's own encoder or renderer."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal

import pytest
from django.utils.translation import gettext_lazy
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import renderers
from rest_framework.exceptions import ErrorDetail

from finance.api.renderers import JSONRenderer

OURS, DRF = JSONRenderer(), renderers.JSONRenderer()

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.text(),  # any code point: control characters, U+2028 and U+2029, quotes, backslashes
    st.decimals(allow_nan=False, allow_infinity=False),
    st.datetimes(timezones=st.sampled_from([None, dt.UTC, dt.timezone(dt.timedelta(hours=-5))])),
    st.dates(),
    st.times(),
    st.uuids(),
    st.builds(ErrorDetail, st.text(), st.sampled_from(["invalid", "required"])),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.text(), inner, max_size=4),
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(documents)
def test_the_same_bytes_as_drfs_renderer(document):
    assert OURS.render(document) == DRF.render(document)


@pytest.mark.parametrize(
    "document",
    [
        {"big": 2**70, "small": -(2**70)},  # past orjson's 64 bits
        {1: "a", None: "b", False: "c"},  # keys that are not text
        {"lazy": gettext_lazy("Transactions"), "when": dt.timedelta(hours=1)},
        {"deep": json.loads("[" * 300 + "]" * 300)},  # past orjson's 254 levels
        {"line": "a\u2028b\u2029c"},
        {"money": Decimal("-0.0001"), "at": dt.datetime(2026, 1, 2, 3, 4, 5, 678901, dt.UTC)},
    ],
)
def test_what_orjson_writes_otherwise_or_refuses_renders_as_drf_does(document):
    out = OURS.render(document)
    assert out == DRF.render(document)
    if "line" in document:
        assert out == b'{"line":"a\\u2028b\\u2029c"}'
    if "money" in document:
        assert out == b'{"money":-0.0001,"at":"2026-01-02T03:04:05.678901Z"}'


def test_an_iterable_becomes_a_list_and_a_nan_is_refused_as_drf_does():
    assert OURS.render({"rows": (x for x in [1, 2])}) == b'{"rows":[1,2]}'
    for renderer in (OURS, DRF):  # DRF's renderer is strict: no NaN in JSON
        with pytest.raises(ValueError, match="not JSON compliant"):
            renderer.render({"nan": Decimal("NaN")})


def test_an_indented_answer_and_an_unknown_type_as_drf():
    document = {"a": [1, {"b": None}], "id": uuid.UUID(int=1)}
    indented = "application/json; indent=2"
    assert OURS.render(document, indented) == DRF.render(document, indented)
    assert b"\n  " in OURS.render(document, indented)
    with pytest.raises(TypeError):
        OURS.render({"x": object()})
    assert OURS.render(None) == b""


def test_the_api_answers_through_it(alice):
    from finance.api import renderers as ours

    account = alice.account(name="Line\u2028break", currency="EUR")
    response = alice.client.get(f"/api/v1/accounts/{account.pk}")
    assert response.status_code == 200
    assert isinstance(response.accepted_renderer, ours.JSONRenderer)
    assert b"Line\\u2028break" in response.content
    assert response.json()["name"] == "Line\u2028break"
