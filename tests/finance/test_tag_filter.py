"""`GET /transactions?tag_ids[]=`: the links carry their transaction's date and household
(finance/tag_dates.py) and the list reads its page and exact count from them, so every path
that writes a transaction or a link must keep the copies right."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.sql import emit_post_migrate_signal
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from finance.ledger.db.fastinsert import fast_insert
from finance.ledger.db.tag_dates import TRIGGERS, tag_dates_drop, tag_dates_ensure
from finance.ledger.db.triggers import triggers_missing
from finance.models import Tag, Transaction, TransactionTag
from finance.services.households import household_permissions_grant
from tests.factories import TagFactory, TransactionFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/transactions"
D = dt.date(2024, 5, 1)


def listed(household, *tags: Tag, **params) -> tuple[list[str], int]:
    """The ids of every page of the tag filter, in order, and the total_count of page 1."""
    query = {"tag_ids[]": [str(t.pk) for t in tags], "per_page": 2, **params}
    ids: list[str] = []
    total = None
    for page in range(1, 50):
        r = household.client.get(URL, {**query, "page": page})
        assert r.status_code == 200, r.content
        body = r.json()
        total = body["pagination"]["total_count"] if total is None else total
        assert body["pagination"]["total_count"] == total  # every page counts the same
        if not body["transactions"]:
            break
        ids.extend(t["id"] for t in body["transactions"])
    return ids, total


def newest_first(*txns: Transaction) -> list[str]:
    fresh = Transaction.objects.filter(pk__in=[t.pk for t in txns])
    return [
        str(pk) for pk in fresh.order_by("-date", "-created_at", "-id").values_list("pk", flat=True)
    ]


def assert_links_follow() -> None:
    """Every link holds its transaction's date and household."""
    wrong = [
        (link.date, link.family_id, link.transaction.date, link.transaction.family_id)
        for link in TransactionTag.objects.select_related("transaction")
        if (link.date, link.family_id) != (link.transaction.date, link.transaction.family_id)
    ]
    assert wrong == []


def create(household, account, tags: list[Tag], day: dt.date, name: str) -> str:
    body = {
        "transaction": {
            "account_id": str(account.pk),
            "date": day.isoformat(),
            "amount": 10,
            "name": name,
            "nature": "expense",
            "tag_ids": [str(t.pk) for t in tags],
        }
    }
    r = household.client.post(URL, body, format="json")
    assert r.status_code == 201, r.content
    return r.json()["id"]


def test_created_rows_come_in_order_with_an_exact_count(alice, charlie):
    account = alice.account()
    trip, food = TagFactory(family=alice.family), TagFactory(family=alice.family)
    made = [create(alice, account, [trip], D + dt.timedelta(days=d), f"t{d}") for d in (3, 9, 1)]
    same_day = create(alice, account, [trip, food], D + dt.timedelta(days=9), "same day")
    create(alice, account, [food], D + dt.timedelta(days=20), "other tag")
    create(alice, account, [], D + dt.timedelta(days=30), "untagged")
    create(charlie, charlie.account(), [TagFactory(family=charlie.family)], D, "stranger")

    ids, total = listed(alice, trip)
    expected = newest_first(*Transaction.objects.filter(pk__in=[*made, same_day]))
    assert ids == expected and total == 4
    assert ids[:2] == [same_day, made[1]]  # same date: the newer row first
    assert_links_follow()


def test_patching_the_date_moves_the_row_and_its_links(alice):
    account = alice.account()
    trip = TagFactory(family=alice.family)
    old = create(alice, account, [trip], D, "old")
    rows = [create(alice, account, [trip], D + dt.timedelta(days=d), f"t{d}") for d in (1, 2, 3)]

    r = alice.client.patch(f"{URL}/{old}", {"transaction": {"date": "2024-06-30"}}, format="json")
    assert r.status_code == 200, r.content

    ids, total = listed(alice, trip)
    assert ids == [old, *reversed(rows)] and total == 4
    assert TransactionTag.objects.get(transaction_id=old).date == dt.date(2024, 6, 30)
    assert_links_follow()


def test_bulk_create_links_carry_the_dates(alice):
    account = alice.account()
    trip = TagFactory(family=alice.family)
    items = [
        {
            "account_id": str(account.pk),
            "date": (D + dt.timedelta(days=d)).isoformat(),
            "amount": 5,
            "name": f"bulk {d}",
            "tag_ids": [str(trip.pk)] if d % 2 else [],
        }
        for d in range(7)
    ]
    r = alice.client.post(f"{URL}/bulk", {"transactions": items}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["summary"]["created"] == 7

    ids, total = listed(alice, trip)
    tagged = Transaction.objects.filter(tags=trip)
    assert ids == newest_first(*tagged) and total == 3
    assert [t.name for t in Transaction.objects.filter(pk__in=ids[:1])] == ["bulk 5"]
    assert_links_follow()


def test_imported_rows_are_listed_by_their_tags(
    alice, django_capture_on_commit_callbacks, settings, tmp_path
):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    account = alice.account()
    csv = (
        b"Date,Description,Amount,Tags\r\n"
        b"2024-02-01,Cafe,-12.50,food|coffee\r\n"
        b"2024-02-03,Bakery,-4.20,food\r\n"
        b"2024-02-02,Refund,25.00,\r\n"
    )
    upload = SimpleUploadedFile("bank.csv", csv, content_type="text/csv")
    r = alice.client.post(
        "/api/v1/imports",
        {"file": upload, "account_id": str(account.pk), "name_col_label": "Description"},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    with django_capture_on_commit_callbacks(execute=True):
        assert (
            alice.client.post(f"/api/v1/imports/{r.json()['data']['id']}/publish").status_code
            == 202
        )

    food = Tag.objects.get(family=alice.family, name="food")
    coffee = Tag.objects.get(family=alice.family, name="coffee")
    bakery, cafe = (Transaction.objects.get(name=n) for n in ("Bakery", "Cafe"))
    assert listed(alice, food) == ([str(bakery.pk), str(cafe.pk)], 2)
    assert listed(alice, food, coffee) == ([str(bakery.pk), str(cafe.pk)], 2)
    assert_links_follow()


def test_the_admin_tag_action_lists_the_rows(alice):
    account = alice.account()
    trip = TagFactory(family=alice.family)
    rows = [TransactionFactory(account=account, date=D + dt.timedelta(days=d)) for d in range(4)]
    household_permissions_grant(user=alice.user)
    client = Client()
    client.force_login(alice.user)
    chosen = [rows[0], rows[2], rows[3]]
    r = client.post(
        reverse("admin:finance_transaction_changelist"),
        {
            "action": "tag_selected",
            "_selected_action": [str(t.pk) for t in chosen],
            "tag": str(trip.pk),
        },
        follow=True,
    )
    assert r.status_code == 200

    assert listed(alice, trip) == (newest_first(*chosen), 3)
    assert_links_follow()


def test_links_follow_dates_written_by_any_path(alice):
    """ORM save, `.update()`, `bulk_update`, raw SQL, COPY / executemany of links, `.set()`."""
    account = alice.account()
    trip = TagFactory(family=alice.family)
    a, b, c, d = (TransactionFactory(account=account, date=D) for _ in range(4))
    a.tags.add(trip)
    b.tags.set([trip])
    fast_insert(TransactionTag, ("transaction", "tag"), [(c.pk, trip.pk)])
    TransactionTag.objects.bulk_create([TransactionTag(transaction=d, tag=trip)])
    assert_links_follow()

    a.date = dt.date(2024, 7, 1)
    a.save()
    Transaction.objects.filter(pk=b.pk).update(date=dt.date(2024, 8, 1))
    c.date = dt.date(2024, 9, 1)
    Transaction.objects.bulk_update([c], ["date"])
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE finance_transaction SET date = %s WHERE id = %s",
            [dt.date(2024, 10, 1), d.pk.hex if connection.vendor == "sqlite" else d.pk],
        )
    assert_links_follow()
    assert listed(alice, trip) == ([str(t.pk) for t in (d, c, b, a)], 4)


def test_several_tags_give_each_transaction_once(alice):
    account = alice.account()
    trip, food, work = (TagFactory(family=alice.family) for _ in range(3))
    both = TransactionFactory(account=account, date=D + dt.timedelta(days=2))
    both.tags.set([trip, food])
    only_trip = TransactionFactory(account=account, date=D + dt.timedelta(days=1))
    only_trip.tags.set([trip])
    only_food = TransactionFactory(account=account, date=D + dt.timedelta(days=3))
    only_food.tags.set([food, work])
    TransactionFactory(account=account, date=D).tags.set([work])

    assert listed(alice, trip, food) == (newest_first(both, only_trip, only_food), 3)
    assert listed(alice, trip, trip) == (newest_first(both, only_trip), 2)


def test_tags_combined_with_other_filters(alice, charlie):
    checking, card = alice.account(), alice.account()
    trip = TagFactory(family=alice.family)
    rows = []
    for day in range(6):
        txn = TransactionFactory(
            account=card if day % 2 else checking,
            date=D + dt.timedelta(days=day),
            amount=Decimal("-3") if day == 5 else Decimal("7"),
        )
        txn.tags.add(trip)
        rows.append(txn)
    other = TransactionFactory(account=charlie.account(), date=D)
    TransactionTag.objects.create(transaction=other, tag=trip)  # a foreign row: never alice's

    assert listed(alice, trip) == (newest_first(*rows), 6)
    assert listed(alice, trip, account_id=str(card.pk)) == (newest_first(*rows[1::2]), 3)
    assert listed(alice, trip, start_date="2024-05-02", end_date="2024-05-04") == (
        newest_first(*rows[1:4]),
        3,
    )
    assert listed(alice, trip, type="income") == ([str(rows[5].pk)], 1)
    assert listed(alice, trip, type="expense")[1] == 5
    assert listed(charlie, trip) == ([str(other.pk)], 1)  # the link's household, not the tag's
    assert listed(alice, TagFactory(family=charlie.family)) == ([], 0)


def test_the_count_reads_only_the_links(alice):
    account = alice.account()
    trip = TagFactory(family=alice.family)
    for day in range(3):
        TransactionFactory(account=account, date=D + dt.timedelta(days=day)).tags.add(trip)
    with CaptureQueriesContext(connection) as ctx:
        r = alice.client.get(URL, {"tag_ids[]": str(trip.pk), "per_page": 2})
    assert r.json()["pagination"]["total_count"] == 3
    [count_sql] = [q["sql"] for q in ctx.captured_queries if "COUNT(" in q["sql"].upper()]
    assert '"finance_transaction"' not in count_sql and "JOIN" not in count_sql.upper()


def test_migrate_puts_dropped_triggers_back_and_repairs_the_links(alice):
    """A SQLite table rebuild by a later migration drops triggers; `migrate` puts them back."""
    trip = TagFactory(family=alice.family)
    txn = TransactionFactory(account=alice.account(), date=D)
    txn.tags.add(trip)
    tag_dates_drop()
    Transaction.objects.filter(pk=txn.pk).update(date=dt.date(2025, 1, 1))
    TransactionTag.objects.create(transaction=TransactionFactory(account=txn.account), tag=trip)
    assert TransactionTag.objects.filter(date=D).exists()  # stale while the triggers are gone

    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    assert_links_follow()
    assert tag_dates_ensure() is None  # in place: nothing to do
    Transaction.objects.filter(pk=txn.pk).update(date=dt.date(2025, 2, 1))
    assert TransactionTag.objects.get(transaction=txn).date == dt.date(2025, 2, 1)
    assert uuid.UUID(str(TransactionTag.objects.get(transaction=txn).family_id)) == alice.family.pk

    tag_dates_drop()
    MigrationRecorder(connection).record_unapplied("finance", "0005_transaction_tag_date")
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    assert _no_triggers()  # migrated back: left alone


def _no_triggers() -> bool:
    return triggers_missing(connection.cursor(), connection.vendor, TRIGGERS) == set(TRIGGERS)


def test_the_admin_change_form_edits_tags_and_date(alice):
    account = alice.account()
    trip, food = TagFactory(family=alice.family), TagFactory(family=alice.family)
    txn = TransactionFactory(account=account, date=D)
    txn.tags.set([trip])
    later = TransactionFactory(account=account, date=D + dt.timedelta(days=5))
    later.tags.set([food])
    household_permissions_grant(user=alice.user)
    client = Client()
    client.force_login(alice.user)
    url = reverse("admin:finance_transaction_change", args=[txn.pk])
    form = client.get(url).context["adminform"].form
    assert "tags" in form.fields  # a through model of its own hides it unless the admin says so
    data = {name: form[name].value() for name in form.fields}
    data = {k: ("" if v is None else v) for k, v in data.items() if v is not False}
    data.update(date="2024-06-01", tags=[str(trip.pk), str(food.pk)])
    r = client.post(url, data)
    assert r.status_code == 302, r.context["adminform"].form.errors

    assert listed(alice, food) == ([str(txn.pk), str(later.pk)], 2)
    assert_links_follow()
