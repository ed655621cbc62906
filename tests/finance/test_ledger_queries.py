"""Lists do a constant number of queries, whatever their length."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from finance.models import RejectedTransfer, Transfer
from finance.services.transfer_matching import transfers_match
from finance.services.transfers import transfer_reject
from tests.factories import CategoryFactory, TransactionFactory


def queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        r = client.get(url, {"per_page": 100})
    assert r.status_code == 200
    return len(ctx.captured_queries)


def seed_transfers(household, n: int) -> None:
    for i in range(n):
        a, b = household.account(), household.account()
        TransactionFactory(account=a, amount=Decimal(10 + i), date=dt.date(2024, 1, 1))
        TransactionFactory(account=b, amount=-Decimal(10 + i), date=dt.date(2024, 1, 2))
        transfers_match(family=household.family, account_ids=[a.pk])
        CategoryFactory(family=household.family)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    ["/api/v1/transfers", "/api/v1/rejected_transfers", "/api/v1/accounts", "/api/v1/categories"],
)
def test_list_queries_do_not_grow(alice, url):
    seed_transfers(alice, 2)
    for transfer in Transfer.objects.all()[:1]:
        transfer_reject(transfer=transfer)
    queries(alice.client, url)  # warm up: the key's last_used_at is written once a minute
    small = queries(alice.client, url)
    seed_transfers(alice, 20)
    for transfer in Transfer.objects.all()[:10]:
        transfer_reject(transfer=transfer)
    assert RejectedTransfer.objects.count() == 11
    assert queries(alice.client, url) == small
