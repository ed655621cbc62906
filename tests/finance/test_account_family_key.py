"""PostgreSQL holds a transaction's account and household together with one foreign key
(finance migration 0016): a row can never sit in one household while its account is
another's, and it still cannot point at an account that does not exist."""

from __future__ import annotations

import uuid

import pytest
from django.db import IntegrityError, connection, transaction

from finance.models import Transaction
from tests.factories import TransactionFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="SQLite keeps Django's one-column keys"
    ),
]


def _checked(sql: str, params: list) -> None:
    """Run a statement and the deferred key checks at once, as COMMIT would."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def test_a_row_moved_to_another_household_than_its_accounts_is_refused(alice, charlie):
    row = TransactionFactory(account=alice.account())
    with pytest.raises(IntegrityError, match="txn_account_family_fk"):
        _checked(
            "UPDATE finance_transaction SET family_id = %s WHERE id = %s",
            [charlie.family.pk, row.pk],
        )
    with pytest.raises(IntegrityError, match="txn_account_family_fk"):
        _checked(
            "UPDATE finance_transaction SET account_id = %s WHERE id = %s",
            [charlie.account().pk, row.pk],
        )
    row.refresh_from_db()
    assert (row.family_id, row.account.family_id) == (alice.family.pk, alice.family.pk)


def test_a_row_of_an_account_that_does_not_exist_is_refused(alice):
    row = TransactionFactory(account=alice.account())
    with pytest.raises(IntegrityError, match="txn_account_family_fk"):
        _checked(
            "UPDATE finance_transaction SET account_id = %s WHERE id = %s",
            [uuid.uuid4(), row.pk],
        )


def test_moving_a_row_to_another_account_of_its_household_is_allowed(alice):
    row = TransactionFactory(account=alice.account())
    other = alice.account(name="Savings")
    _checked("UPDATE finance_transaction SET account_id = %s WHERE id = %s", [other.pk, row.pk])
    assert Transaction.objects.get(pk=row.pk).account_id == other.pk


def test_the_key_replaces_the_two_one_column_keys():
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, "finance_transaction")
    keys = sorted(tuple(c["columns"]) for c in constraints.values() if c["foreign_key"])
    assert keys == [("account_id", "family_id"), ("category_id",), ("merchant_id",)]
