"""Lists do a constant number of queries, whatever their length."""

from __future__ import annotations

import datetime as dt
import gc
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from finance.ledger.transfer_matching import transfers_match
from finance.models import RejectedTransfer, Transaction, Transfer
from finance.services.transfers import transfer_reject
from imports.models import Import
from tests.factories import CategoryFactory, TagFactory, TransactionFactory


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


def objects_alive(model: type) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is model)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "model"), [("/api/v1/transactions", Transaction), ("/api/v1/imports", Import)]
)
def test_a_list_page_frees_its_rows_without_the_cycle_collector(alice, url, model):
    """A page's rows are freed when the response is, not by the oldest generation's garbage
    collection (a 20-70 ms pause every ~20 list requests, most of a list's p99): no serializer
    holds them and they hold no reference cycle (tags prefetched as a plain list, the import's
    upload checked without its FieldFile)."""
    tag = TagFactory(family=alice.family)
    for i in range(5):
        TransactionFactory(account=alice.account(), amount=Decimal(i + 1)).tags.add(tag)
        Import.objects.create(family=alice.family, file=f"imports/{i}.csv")
    alice.client.get(url)  # warm up
    gc.collect()
    gc.disable()
    try:
        before = objects_alive(model)
        r = alice.client.get(url, {"per_page": 100})
        after = objects_alive(model)
    finally:
        gc.enable()
    assert r.status_code == 200
    page = r.json()
    assert len(page.get("transactions") or page.get("data")) == 5
    assert after == before
