"""PostgreSQL checks the foreign keys of the tables written in bulk once per statement
(core/statement_keys.py; finance migrations 0016, 0020 and 0021, imports 0008): the same
rules as the constraints they replaced, a row can never point at a parent that does not exist
nor sit in one household while its account is another's, and a parent still referenced cannot
go."""

from __future__ import annotations

import threading
import uuid

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction

from finance.ledger.db.triggers import triggers_missing
from finance.models import AccountBalance, Category, Tag, Transaction, TransactionTag
from imports.models import Import
from tests.factories import CategoryFactory, MerchantFactory, TagFactory, TransactionFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="SQLite keeps Django's one-column keys"
    ),
]

KEYS = {
    "finance_transaction": ("txn_account_family_fk", "txn_category_fk", "txn_merchant_fk"),
    "imports_importrow": ("importrow_import_fk",),
    "finance_transaction_tags": ("txn_tag_transaction_fk", "txn_tag_tag_fk"),
    "finance_accountbalance": ("balance_account_fk",),
}


def _run(sql: str, params: list) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def _copy_row(row, **changes) -> tuple[str, list]:
    """An INSERT ... SELECT of three copies of `row` under new keys (one statement)."""
    model = type(row)
    table = model._meta.db_table
    cols = [f.column for f in model._meta.concrete_fields if not f.primary_key]
    # Each copy its own row number (an import row's (import, row number) is unique).
    own = {"row_number": "row_number + g AS row_number"}
    picked = ", ".join(f"%s AS {c}" if c in changes else own.get(c, c) for c in cols)
    params = [changes[c] for c in cols if c in changes]
    # A transaction's key is a uuid to draw; an import row's is the table's own sequence.
    into, drawn = (
        (["id", *cols], ["gen_random_uuid()", *cols]) if model is Transaction else (cols, cols)
    )
    sql = (
        f"INSERT INTO {table} ({', '.join(into)}) SELECT {', '.join(drawn)} FROM ("
        f"SELECT {picked} FROM {table}, generate_series(1, 3) AS g WHERE id = %s) AS s"
    )
    return sql, [*params, row.pk]


def test_the_plain_keys_are_gone_and_each_table_has_its_statement_checks():
    with connection.cursor() as cursor:
        for table, names in KEYS.items():
            constraints = connection.introspection.get_constraints(cursor, table)
            assert [c["columns"] for c in constraints.values() if c["foreign_key"]] == []
            wanted = [f"{n}_{w}" for n in names for w in ("ins", "upd", "pdel", "pupd")]
            assert triggers_missing(cursor, connection.vendor, wanted) == set()


def test_a_row_moved_to_another_household_than_its_accounts_is_refused(alice, charlie):
    row = TransactionFactory(account=alice.account())
    with pytest.raises(IntegrityError, match="txn_account_family_fk"):
        _run(
            "UPDATE finance_transaction SET family_id = %s WHERE id = %s",
            [charlie.family.pk, row.pk],
        )
    with pytest.raises(IntegrityError, match="txn_account_family_fk"):
        _run(
            "UPDATE finance_transaction SET account_id = %s WHERE id = %s",
            [charlie.account().pk, row.pk],
        )
    row.refresh_from_db()
    assert (row.family_id, row.account.family_id) == (alice.family.pk, alice.family.pk)


def test_a_row_of_an_account_that_does_not_exist_is_refused(alice):
    row = TransactionFactory(account=alice.account())
    with pytest.raises(IntegrityError, match="txn_account_family_fk") as raised:
        _run(
            "UPDATE finance_transaction SET account_id = %s WHERE id = %s",
            [uuid.uuid4(), row.pk],
        )
    assert raised.value.__cause__.sqlstate == "23503"


def test_moving_a_row_to_another_account_of_its_household_is_allowed(alice):
    row = TransactionFactory(account=alice.account())
    other = alice.account(name="Savings")
    _run("UPDATE finance_transaction SET account_id = %s WHERE id = %s", [other.pk, row.pk])
    assert Transaction.objects.get(pk=row.pk).account_id == other.pk


@pytest.mark.parametrize(
    ("column", "key"),
    [
        ("account_id", "txn_account_family_fk"),
        ("category_id", "txn_category_fk"),
        ("merchant_id", "txn_merchant_fk"),
    ],
)
def test_many_rows_in_one_statement_with_one_unknown_parent_are_all_refused(alice, column, key):
    row = TransactionFactory(
        account=alice.account(),
        category=CategoryFactory(family=alice.family),
        merchant=MerchantFactory(family=alice.family),
    )
    missing = uuid.uuid4()
    sql, params = _copy_row(row, **{column: missing})
    with pytest.raises(IntegrityError, match=key) as raised:
        _run(sql, params)
    assert str(missing) in str(raised.value)
    assert Transaction.objects.filter(family=alice.family).count() == 1
    # The same statement with every parent present writes its rows.
    _run(*_copy_row(row))
    assert Transaction.objects.filter(family=alice.family).count() == 4


def test_a_row_without_category_or_merchant_needs_neither(alice):
    row = TransactionFactory(account=alice.account(), category=None, merchant=None)
    _run(*_copy_row(row))
    assert Transaction.objects.filter(family=alice.family, category=None).count() == 4


@pytest.mark.parametrize("table", ["finance_category", "finance_merchant", "finance_account"])
def test_a_parent_still_referenced_cannot_be_deleted_behind_the_orms_back(alice, table):
    row = TransactionFactory(
        account=alice.account(),
        category=CategoryFactory(family=alice.family),
        merchant=MerchantFactory(family=alice.family),
    )
    parent = {"finance_category": row.category_id, "finance_merchant": row.merchant_id}
    parent_id = parent.get(table, row.account_id)
    with pytest.raises(IntegrityError, match="still referenced") as raised:
        _run(f"DELETE FROM {table} WHERE id = %s", [parent_id])
    assert str(parent_id) in str(raised.value)
    with pytest.raises(IntegrityError, match="still referenced"):
        _run(f"UPDATE {table} SET id = %s WHERE id = %s", [uuid.uuid4(), parent_id])
    assert Transaction.objects.filter(pk=row.pk).exists()


def test_the_orm_deletes_parents_as_before(alice):
    """Django empties or re-points the children first (SET_NULL, CASCADE), then deletes."""
    category = CategoryFactory(family=alice.family)
    account = alice.account()
    row = TransactionFactory(account=account, category=category)
    category.delete()
    row.refresh_from_db()
    assert row.category_id is None
    account.delete()
    assert not Transaction.objects.filter(pk=row.pk).exists()


def test_an_import_row_needs_its_import_and_keeps_it(alice):
    imp = Import.objects.create(family=alice.family, account=alice.account())
    line = imp.rows.create(row_number=2, raw=["x"])
    with pytest.raises(IntegrityError, match="importrow_import_fk"):
        _run(*_copy_row(line, data_import_id=uuid.uuid4()))
    with pytest.raises(IntegrityError, match="still referenced"):
        _run("DELETE FROM imports_import WHERE id = %s", [imp.pk])
    imp.delete()
    assert not Import.objects.filter(pk=imp.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_an_insert_holds_its_parents_until_it_commits(alice):
    """As the constraint's own check does: the parents of the rows being written are locked
    FOR KEY SHARE, so a concurrent delete of one waits (here: gives up) until they commit."""
    category = CategoryFactory(family=alice.family)
    row = TransactionFactory(account=alice.account(), category=None)
    settings = connection.settings_dict
    dsn = psycopg.conninfo.make_conninfo(
        dbname=settings["NAME"], host=settings["HOST"] or "", port=settings["PORT"] or "",
        user=settings["USER"] or "", password=settings["PASSWORD"] or "",
    )  # fmt: skip
    outcome: list[str] = []

    def delete_elsewhere() -> None:
        with psycopg.connect(dsn, autocommit=True) as other:
            other.execute("SET lock_timeout = '300ms'")
            try:
                other.execute("DELETE FROM finance_category WHERE id = %s", [category.pk])
                outcome.append("deleted")
            except psycopg.errors.LockNotAvailable:
                outcome.append("waited")

    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(*_copy_row(row, category_id=category.pk))
        worker = threading.Thread(target=delete_elsewhere)
        worker.start()
        worker.join()
    assert outcome == ["waited"]
    assert Category.objects.filter(pk=category.pk).exists()
    assert Transaction.objects.filter(category=category).count() == 3


def test_a_tag_link_needs_its_transaction_and_tag_and_keeps_them(alice):
    row = TransactionFactory(account=alice.account())
    tag = TagFactory(family=alice.family)
    with pytest.raises(IntegrityError, match="txn_tag_transaction_fk"):
        _run(
            "INSERT INTO finance_transaction_tags (transaction_id, tag_id) VALUES (%s, %s)",
            [uuid.uuid4(), tag.pk],
        )
    with pytest.raises(IntegrityError, match="txn_tag_tag_fk"):
        _run(
            "INSERT INTO finance_transaction_tags (transaction_id, tag_id) VALUES (%s, %s)",
            [row.pk, uuid.uuid4()],
        )
    row.tags.add(tag)
    for table, pk in (("finance_transaction", row.pk), ("finance_tag", tag.pk)):
        with pytest.raises(IntegrityError, match="still referenced"):
            _run(f"DELETE FROM {table} WHERE id = %s", [pk])
    tag.delete()
    assert not TransactionTag.objects.filter(transaction=row).exists()
    assert not Tag.objects.filter(pk=tag.pk).exists()


def test_a_balance_row_needs_its_account_and_keeps_it(alice):
    account = alice.account()
    insert = (
        "INSERT INTO finance_accountbalance (account_id, date, balance, currency) "
        "VALUES (%s, '2024-01-01', 0, 'USD')"
    )
    with pytest.raises(IntegrityError, match="balance_account_fk"):
        _run(insert, [uuid.uuid4()])
    _run(insert, [account.pk])
    assert AccountBalance.objects.filter(account=account).count() == 1
    with pytest.raises(IntegrityError, match=r"(?s)balance_account_fk.*still referenced"):
        _run("DELETE FROM finance_account WHERE id = %s", [account.pk])
    account.delete()
    assert not AccountBalance.objects.filter(account_id=account.pk).exists()
