"""Each output shape is declared once, by its serializer's fields (which also give its OpenAPI
schema): the small references' fast functions are derived from those fields and render them
as DRF does; every hand-written representation answers exactly the declared keys, in order."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from finance.models import Account, Category, Family, Merchant, Tag, Transfer
from finance.serializers import refs
from finance.serializers.ledger import (
    AccountSerializer,
    CategorySerializer,
    MerchantSerializer,
    TagSerializer,
)
from finance.serializers.transfers import RejectedTransferSerializer, TransferSerializer
from finance.services.transfers import transfer_reject
from tests import factories as f
from tests.trades.factories import HoldingFactory, SecurityFactory, TradeFactory
from trades.models import Security
from trades.serializers import (
    HoldingSerializer,
    SecurityRefSerializer,
    SecuritySerializer,
    TradeCreatedSerializer,
    TradeSerializer,
    security_ref,
)
from trades.services.trades import Entry

texts = st.text(min_size=1, max_size=10)
family = Family(name="Household", currency="USD")
RECORDS = {
    refs.AccountBriefRefSerializer: (
        refs.account_brief_ref,
        st.builds(
            Account,
            family=st.just(family),
            name=texts,
            account_type=st.sampled_from(Account.Type.values),
            status=st.sampled_from(Account.Status.values),
        ),
    ),
    refs.AccountRefSerializer: (
        refs.account_ref,
        st.builds(
            Account,
            family=st.just(family),
            name=texts,
            account_type=st.sampled_from(Account.Type.values),
            status=st.sampled_from(Account.Status.values),
        ),
    ),
    refs.CategoryBriefRefSerializer: (
        refs.category_brief_ref,
        st.builds(Category, family=st.just(family), name=texts, color=texts, icon=texts),
    ),
    refs.CategoryRefSerializer: (
        refs.category_ref,
        st.builds(Category, family=st.just(family), name=texts, color=texts, icon=texts),
    ),
    refs.MerchantRefSerializer: (
        refs.merchant_ref,
        st.builds(Merchant, family=st.just(family), name=texts),
    ),
    refs.TagRefSerializer: (
        refs.tag_ref,
        st.builds(Tag, family=st.just(family), name=texts, color=texts),
    ),
    SecurityRefSerializer: (
        security_ref,
        st.builds(Security, ticker=texts, name=texts),
    ),
}


@pytest.mark.parametrize("serializer", list(RECORDS), ids=lambda s: s.__name__)
def test_a_reference_is_derived_from_its_declared_fields(serializer):
    for field in serializer._declared_fields.values():
        assert field.source is None or field.source == field.field_name, field
        assert not isinstance(field, serializers.BaseSerializer), field
    ref, records = RECORDS[serializer]
    assert ref(None) is None

    @settings(max_examples=30, deadline=None)
    @given(records)
    def check(record: Any) -> None:
        declared = serializers.Serializer.to_representation(serializer(), record)
        assert json.dumps(ref(record)) == json.dumps(declared)

    check()


def _keys(serializer: type[serializers.Serializer]) -> list[str]:
    return list(serializer._declared_fields)


@pytest.mark.django_db
def test_every_hand_written_representation_answers_its_declared_keys():
    family = f.FamilyFactory()
    account = f.AccountFactory(family=family, account_type=Account.Type.INVESTMENT)
    outflow = f.TransactionFactory(account=account, amount=Decimal("10"))
    inflow = f.TransactionFactory(account=f.AccountFactory(family=family), amount=Decimal("-10"))
    transfer = Transfer.objects.create(
        family=family, inflow_transaction=inflow, outflow_transaction=outflow
    )
    trade = TradeFactory(account=account)
    shapes: list[tuple[type[serializers.Serializer], Any]] = [
        (AccountSerializer, account),
        (CategorySerializer, f.CategoryFactory(family=family)),
        (MerchantSerializer, f.MerchantFactory(family=family)),
        (TagSerializer, f.TagFactory(family=family)),
        (TransferSerializer, transfer),
        (TradeSerializer, trade),
        (TradeCreatedSerializer, Entry(trade, "Trade")),
        (TradeCreatedSerializer, Entry(outflow, "Transaction")),
        (SecuritySerializer, SecurityFactory(family=family)),
        (HoldingSerializer, HoldingFactory(account=account, date=dt.date(2024, 5, 1))),
    ]
    for serializer, record in shapes:
        assert list(serializer(record).data) == _keys(serializer), serializer.__name__
    rejected = transfer_reject(transfer=transfer)
    answer = RejectedTransferSerializer(rejected).data
    assert list(answer) == _keys(RejectedTransferSerializer)
    assert list(answer["inflow_transaction"]["account"]) == _keys(refs.AccountBriefRefSerializer)
