"""`transaction_build` makes its row without the model's constructor (finance/services/
transactions.py, `_row`): the row must be the one the constructor makes, and the constructor
is used whenever something listens to its signals."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db.models.signals import post_init

from finance.ledger import ledger_batch
from finance.models import Transaction
from finance.services.transactions import ResolvedRefs, _row, transaction_build
from tests.factories import CategoryFactory

pytestmark = pytest.mark.django_db


def _fields(txn: Transaction) -> dict:
    return {f.attname: getattr(txn, f.attname) for f in Transaction._meta.concrete_fields}


def test_a_built_row_is_the_constructors_row(alice):
    account, category = alice.account(), CategoryFactory(family=alice.family)
    data = {"date": dt.date(2026, 3, 1), "amount": Decimal("4.20"), "name": "Tea"}
    refs = ResolvedRefs(account=account, category=category)
    txn = transaction_build(family=alice.family, data=data, refs=refs)
    made = Transaction(*_fields(txn).values())
    assert _fields(txn) == _fields(made)
    assert txn.get_deferred_fields() == set() and txn._state.adding and txn._state.db is None
    assert (txn.account, txn.category, txn.family) == (account, category, alice.family)
    with ledger_batch(family=alice.family) as batch:
        [(_, created)] = batch.add([(txn, None)])
    assert created
    stored = Transaction.objects.get(pk=txn.pk)
    assert _fields(stored) | {"created_at": None, "updated_at": None} == _fields(txn) | {
        "created_at": None,
        "updated_at": None,
    }


def test_a_listener_to_the_constructor_still_sees_each_row(alice):
    seen = []

    def listener(sender, instance, **kwargs):
        seen.append(instance)

    values = list(_fields(Transaction(family=alice.family, name="x")).values())
    post_init.connect(listener, sender=Transaction)
    try:
        txn = _row(values)
    finally:
        post_init.disconnect(listener, sender=Transaction)
    assert seen == [txn]
    _row(values)
    assert seen == [txn]  # no listener any more: not the constructor
