"""A large write derives its per-row insert triggers' work once per statement on SQLite
(finance/ledger/db/deferred.py): the counters, the search queue and the tag links' dates come
out as the triggers would leave them, the triggers are back afterwards, and a write that fails
leaves them and everything else as it was. The same tests hold on PostgreSQL, where nothing
is deferred."""

from __future__ import annotations

import datetime as dt
import uuid
from collections import Counter

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Sum
from django.test.utils import CaptureQueriesContext

from finance.ledger.db import deferred, row_counts, search_sqlite, tag_dates
from finance.ledger.db.fastinsert import fast_insert
from finance.ledger.db.triggers import triggers_missing
from finance.models import Transaction, TransactionCount, TransactionTag
from tests.factories import TagFactory, TransactionFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/transactions"
D = dt.date(2024, 5, 1)
WORD = "zqxbulkword"


def counters() -> Counter:
    sums = TransactionCount.objects.values("family_id", "account_id", "expense").annotate(
        n=Sum("row_count")
    )
    return Counter({(s["family_id"], s["account_id"], s["expense"]): s["n"] for s in sums})


def truth() -> Counter:
    return Counter(
        (t.family_id, t.account_id, t.amount >= 0)
        for t in Transaction.objects.only("family_id", "account_id", "amount")
    )


def all_triggers() -> set[str]:
    names = (*row_counts.TRIGGERS, *tag_dates.TRIGGERS)
    if connection.vendor == "sqlite":
        names += search_sqlite.TRIGGERS
    else:
        names = (*row_counts.TRIGGERS, tag_dates.TRIGGERS[0], tag_dates.TRIGGERS[2])
    with connection.cursor() as cursor:
        return triggers_missing(cursor, connection.vendor, names)


def bulk(household, items: list[dict]) -> dict:
    r = household.client.post(f"{URL}/bulk", {"transactions": items}, format="json")
    assert r.status_code in (200, 201, 207), r.content
    return r.json()


def test_a_large_bulk_create_keeps_counters_search_and_tag_dates(alice, charlie):
    old, new = alice.account(), alice.account()  # one with a counter row already, one without
    TransactionFactory(family=alice.family, account=old, amount="3")
    TransactionFactory(family=charlie.family, account=charlie.account(), amount="3")
    tag = TagFactory(family=alice.family)
    n = deferred.BULK + 44
    items = [
        {
            "account_id": str((old, new)[i % 2].pk),
            "date": (D + dt.timedelta(days=i % 40)).isoformat(),
            "amount": str(i + 1),
            "nature": "income" if i % 5 == 0 else "expense",
            "name": f"{WORD} {i}" if i % 4 == 0 else f"row {i}",
            "tag_ids": [str(tag.pk)] if i % 2 else [],
        }
        for i in range(n)
    ]
    with CaptureQueriesContext(connection) as queries:
        answer = bulk(alice, items)
    assert answer["summary"]["created"] == n
    dropped = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("DROP TRIGGER")]
    assert bool(dropped) == (connection.vendor == "sqlite")

    assert all_triggers() == set()
    assert counters() == truth()
    r = alice.client.get(URL, {"search": WORD, "per_page": 1})
    assert r.json()["pagination"]["total_count"] == len(range(0, n, 4))
    links = TransactionTag.objects.filter(transaction__family=alice.family)
    assert links.count() == n // 2
    assert not links.filter(date__isnull=True).exists()
    assert all(
        link.date == link.transaction.date and link.family_id == alice.family.pk
        for link in links.select_related("transaction")
    )
    r = alice.client.get(URL, {"tag_ids[]": [str(tag.pk)], "per_page": 1})
    assert r.json()["pagination"]["total_count"] == n // 2

    # the triggers work again for a small write afterwards
    bulk(alice, items[:2])
    assert counters() == truth()


def test_a_small_write_keeps_its_triggers(alice):
    account = alice.account()
    item = {"account_id": str(account.pk), "date": D.isoformat(), "amount": "1", "name": "x"}
    with CaptureQueriesContext(connection) as queries:
        bulk(alice, [item] * 3)
    assert not [q for q in queries.captured_queries if q["sql"].startswith("DROP TRIGGER")]
    assert counters() == truth()


def test_a_failed_large_insert_leaves_the_triggers_and_counters(alice):
    account = alice.account()
    TransactionFactory(family=alice.family, account=account, amount="2")
    before = counters()
    taken = Transaction.objects.get().pk
    names = ("id", "family", "account", "date", "amount", "currency", "name")
    rows = [
        (uuid.uuid4(), alice.family.pk, account.pk, D, "1.00", "USD", f"{WORD} {i}")
        for i in range(deferred.BULK)
    ]
    rows.append((taken, alice.family.pk, account.pk, D, "1.00", "USD", "a key already taken"))
    # COPY (PostgreSQL) raises the driver's own error, executemany Django's
    with pytest.raises((IntegrityError, connection.Database.IntegrityError)), transaction.atomic():
        fast_insert(Transaction, names, rows)
    assert all_triggers() == set()
    assert counters() == before == truth()
    # and a later row still goes through the triggers
    TransactionFactory(family=alice.family, account=account, amount="-5")
    assert counters() == truth()


def test_large_inserts_one_after_another_count_each_row_once(alice):
    """Each large insert counts only its own rows, also when several run in one transaction
    and after a rolled-back one (SQLite stages each insert's counts in a temporary table): a
    later insert into another account must not count the earlier one's rows again."""
    accounts = [alice.account(), alice.account(), alice.account()]
    TransactionFactory(family=alice.family, account=accounts[0], amount="2")
    names = ("id", "family", "account", "date", "amount", "currency", "name")

    def rows(n: int, account: int) -> list[tuple]:
        return [
            (uuid.uuid4(), alice.family.pk, accounts[account].pk, D,
             "-1.50" if i % 3 else "4.00", "USD", f"row {i}")
            for i in range(n)
        ]  # fmt: skip

    with pytest.raises(RuntimeError), transaction.atomic():
        fast_insert(Transaction, names, rows(deferred.BULK, 2))
        raise RuntimeError("rolled back")
    assert counters() == truth()
    with transaction.atomic():
        fast_insert(Transaction, names, rows(deferred.BULK + 7, 0))
        fast_insert(Transaction, names, rows(deferred.BULK + 1, 1))
    assert Transaction.objects.count() == 1 + 2 * deferred.BULK + 8
    assert counters() == truth()
    fast_insert(Transaction, names, rows(deferred.BULK, 2))
    assert counters() == truth()
