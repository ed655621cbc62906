"""The ledger's row counters (finance/row_counts.py): every path that writes, moves or deletes a
transaction keeps them equal to the rows, and a list filtered only by accounts and `type`
takes its exact `total_count` from them."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections import Counter
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.sql import emit_post_migrate_signal
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Sum
from django.test.utils import CaptureQueriesContext

from finance.ledger.db.fastinsert import fast_insert
from finance.ledger.db.row_counts import COMPACT_ABOVE, TRIGGERS, row_counts_drop, row_counts_ensure
from finance.ledger.db.triggers import triggers_missing
from finance.models import Transaction, TransactionCount
from tests.factories import AccountFactory, FamilyFactory, TransactionFactory

URL = "/api/v1/transactions"
D = dt.date(2024, 5, 1)


def truth() -> Counter:
    """Rows per (household, account, expense) in the ledger itself."""
    return Counter(
        (t.family_id, t.account_id, t.amount >= 0)
        for t in Transaction.objects.only("family_id", "account_id", "amount")
    )


def counted() -> Counter:
    """The same, as the counters say (summing PostgreSQL's deltas), zero keys left out."""
    sums = TransactionCount.objects.values("family_id", "account_id", "expense").annotate(
        n=Sum("row_count")
    )
    return Counter(
        {(s["family_id"], s["account_id"], s["expense"]): s["n"] for s in sums if s["n"]}
    )


def assert_counted() -> None:
    assert counted() == truth()


def total(household, **params) -> int:
    r = household.client.get(URL, {"per_page": 1, **params})
    assert r.status_code == 200, r.content
    return r.json()["pagination"]["total_count"]


def post(household, account, amount: str, **extra) -> str:
    body = {"account_id": str(account.pk), "date": D.isoformat(), "amount": amount, "name": "x"}
    r = household.client.post(URL, {"transaction": {**body, **extra}}, format="json")
    assert r.status_code == 201, r.content
    return r.json()["id"]


@pytest.mark.django_db
def test_api_writes_keep_the_counters(alice, charlie):
    checking, card = alice.account(), alice.account()
    ids = [post(alice, checking, "10") for _ in range(3)]
    post(alice, card, "-4", nature="income")
    post(charlie, charlie.account(), "1")
    items = [
        {"account_id": str(a.pk), "date": D.isoformat(), "amount": amt, "name": "bulk"}
        for a, amt in ((checking, "5"), (card, "7"), (card, "-2"), (checking, "-1"))
    ]
    r = alice.client.post(f"{URL}/bulk", {"transactions": items}, format="json")
    assert r.json()["summary"]["created"] == 4
    assert_counted()

    # a sign flip, a move to another account, a delete
    r = alice.client.patch(f"{URL}/{ids[0]}", {"transaction": {"amount": "-10"}}, format="json")
    assert r.status_code == 200, r.content
    r = alice.client.patch(
        f"{URL}/{ids[1]}", {"transaction": {"account_id": str(card.pk)}}, format="json"
    )
    assert r.status_code == 200, r.content
    assert alice.client.delete(f"{URL}/{ids[2]}").status_code in (200, 204)
    assert_counted()
    assert total(alice) == 7
    assert total(alice, account_id=str(card.pk)) == 4
    assert total(alice, type="income") == 4
    assert total(alice, type="expense", account_id=str(checking.pk)) == 1


@pytest.mark.django_db
def test_every_write_path_keeps_the_counters(alice):
    """`.update()`, `bulk_update`, `bulk_create`, COPY / executemany, raw SQL, deletes."""
    a, b = alice.account(), alice.account()
    rows = [TransactionFactory(account=a, amount=Decimal(i - 2)) for i in range(6)]
    Transaction.objects.bulk_create(
        [
            Transaction(
                family=alice.family, account=b, date=D, amount=Decimal(3), currency="USD", name="n"
            )
        ]
    )
    fast_insert(
        Transaction,
        ("id", "family", "account", "date", "amount", "currency", "name"),
        [(uuid.uuid4(), alice.family.pk, b.pk, D, Decimal(-1), "USD", "c") for _ in range(5)],
    )
    assert_counted()

    Transaction.objects.filter(pk__in=[t.pk for t in rows[:3]]).update(amount=Decimal(9))
    rows[3].account = b
    rows[4].amount = Decimal(-8)
    Transaction.objects.bulk_update(rows[3:5], ["account", "amount"])
    Transaction.objects.filter(pk=rows[5].pk).update(name="renamed")  # neither key moves
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE finance_transaction SET account_id = %s WHERE id = %s",
            [a.pk.hex, rows[3].pk.hex] if connection.vendor == "sqlite" else [a.pk, rows[3].pk],
        )
    assert_counted()

    Transaction.objects.filter(account=b, amount__lt=0).delete()
    rows[0].delete()
    assert_counted()
    a.delete()  # its rows go with it
    assert_counted()
    assert total(alice) == 1


@pytest.mark.django_db
def test_an_import_and_its_revert_keep_the_counters(
    alice, django_capture_on_commit_callbacks, settings, tmp_path
):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    account = alice.account()
    post(alice, account, "3")
    csv = b"Date,Description,Amount\r\n" + b"".join(
        f"2024-02-{d:02d},Row {d},{'-' if d % 3 else ''}{d}.50\r\n".encode() for d in range(1, 21)
    )
    upload = SimpleUploadedFile("bank.csv", csv, content_type="text/csv")
    r = alice.client.post(
        "/api/v1/imports",
        {"file": upload, "account_id": str(account.pk), "name_col_label": "Description"},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    imp = r.json()["data"]["id"]
    with django_capture_on_commit_callbacks(execute=True):
        assert alice.client.post(f"/api/v1/imports/{imp}/publish").status_code == 202
    assert_counted()
    assert total(alice, account_id=str(account.pk)) == 21
    assert total(alice, type="income") + total(alice, type="expense") == 21

    with django_capture_on_commit_callbacks(execute=True):
        r = alice.client.post(f"/api/v1/imports/{imp}/revert")
    assert r.status_code in (200, 202), r.content
    assert_counted()
    assert total(alice) == 1


@pytest.mark.django_db
def test_the_list_count_comes_from_the_counters(alice, charlie):
    checking, card = alice.account(), alice.account()
    for i in range(5):
        TransactionFactory(account=checking if i % 2 else card, amount=Decimal(i - 1))
    TransactionFactory(account=charlie.account())

    for params, expected in (
        ({}, 5),
        ({"account_id": str(card.pk)}, 3),
        ({"type": "income"}, 1),
        ({"account_ids[]": [str(card.pk), str(checking.pk)], "type": "income"}, 1),
        ({"account_id": str(card.pk), "account_ids[]": [str(checking.pk)]}, 0),
        ({"type": "expense"}, 4),
    ):
        with CaptureQueriesContext(connection) as ctx:
            assert total(alice, **params) == expected, params
        if expected < 2:
            continue  # a short page counts its own rows
        sql = " ".join(q["sql"] for q in ctx.captured_queries if "COUNT(" in q["sql"].upper())
        assert "finance_transactioncount" in sql and '"finance_transaction"' not in sql, params

    # a stranger's account counts nothing, exactly as the query would
    assert total(alice, account_id=str(charlie.account().pk)) == 0
    # other filters count their matches
    with CaptureQueriesContext(connection) as ctx:
        assert total(alice, type="expense", min_amount="2") == 2
    assert "finance_transactioncount" not in " ".join(q["sql"] for q in ctx.captured_queries)


@pytest.mark.django_db
def test_migrate_puts_dropped_triggers_back_and_recounts(alice):
    """A SQLite table rebuild by a later migration drops triggers; `migrate` puts them back."""
    account = alice.account()
    TransactionFactory(account=account, amount=Decimal(4))
    row_counts_drop()
    TransactionFactory(account=account, amount=Decimal(-4))
    assert counted() != truth()  # stale while the triggers are gone...
    assert total(alice, type="income") == 1  # ...so the list counts its matches

    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    assert_counted()
    assert row_counts_ensure() is False  # in place: nothing to do
    TransactionFactory(account=account, amount=Decimal(-1))
    assert_counted()
    assert total(alice, type="income") == 2

    row_counts_drop()
    MigrationRecorder(connection).record_unapplied("finance", "0007_transaction_count")
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    # migrated back: the triggers stay gone
    assert triggers_missing(connection.cursor(), connection.vendor, TRIGGERS) == set(TRIGGERS)


@pytest.mark.django_db
def test_deltas_are_folded_when_they_pile_up(alice, postgres_only):
    account = alice.account()
    for i in range(COMPACT_ABOVE + 6):  # one statement each: one delta row each
        TransactionFactory(account=account, amount=Decimal(1 if i % 4 else -1))
    assert TransactionCount.objects.count() == COMPACT_ABOVE + 6
    assert total(alice) == COMPACT_ABOVE + 6  # reads the deltas, then folds them
    assert TransactionCount.objects.count() == 2  # one row per sign
    assert_counted()
    assert total(alice, type="income") == 18


def test_the_scheduled_tidy_leaves_one_row_per_key_with_rows(alice, charlie):
    """Households that write and never list, and deleted accounts, leave no counter rows
    behind once the beat's tidy has run; the counts stay exact."""
    from finance.tasks import row_counts_tidy_task

    kept, emptied, other = alice.account(), alice.account(), charlie.account()
    for i in range(6):  # one statement each: one delta row each on PostgreSQL
        TransactionFactory(account=kept, amount=Decimal(1 if i % 3 else -1))
        TransactionFactory(account=emptied)
        TransactionFactory(account=other)
    r = alice.client.delete(f"/api/v1/accounts/{emptied.pk}?cascade=true")
    assert r.status_code in (200, 204), r.content
    row_counts_tidy_task.apply().get()
    keys = list(TransactionCount.objects.values_list("account_id", "expense", "row_count"))
    assert sorted(k[2] for k in keys if k[0] == kept.pk) == [2, 4]  # one row per sign
    assert [k for k in keys if k[0] == emptied.pk] == []  # its key, at zero, is gone
    assert len(keys) == 3  # and charlie's one
    assert_counted()
    assert (total(alice), total(alice, type="income"), total(charlie)) == (6, 2, 6)
    row_counts_tidy_task.apply().get()  # nothing left to tidy
    assert TransactionCount.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_to_the_same_accounts_never_wait_or_lose_a_count(postgres_only):
    """Appended deltas take no row lock: writers crossing two accounts in opposite orders
    (a lock-based counter could deadlock) all commit, and every row is counted."""
    family = FamilyFactory()
    a, b = AccountFactory(family=family), AccountFactory(family=family)
    runs, per_run = 6, 20
    barrier = threading.Barrier(runs)
    errors: list[BaseException] = []

    def run(n: int) -> None:
        from django.db import transaction

        try:
            first, second = (a, b) if n % 2 else (b, a)
            barrier.wait()
            with transaction.atomic():
                for i in range(per_run):
                    TransactionFactory(account=first if i < per_run // 2 else second)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert_counted()
    assert sum(truth().values()) == runs * per_run
