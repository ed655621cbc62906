"""`field__any` (core/lookups.py) finds exactly the rows `field__in` finds, for every kind of
value, on both databases; on PostgreSQL it sends the values as one array parameter."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from finance.models import Transaction
from tests.factories import AccountFactory, TransactionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows():
    account = AccountFactory()
    other = AccountFactory(family=account.family)
    return [
        TransactionFactory(
            account=account if i % 2 else other,
            amount=Decimal(f"{i}.50"),
            date=dt.date(2024, 1, 1 + i),
            name=f"Row {i}",
            external_id=f"ext-{i}" if i % 3 else None,
        )
        for i in range(1, 9)
    ]


def pks(**lookup) -> list[uuid.UUID]:
    return sorted(Transaction.objects.filter(**lookup).values_list("pk", flat=True))


@pytest.mark.parametrize(
    ("field", "pick"),
    [
        ("amount", lambda t: t.amount),
        ("pk", lambda t: t.pk),
        ("account_id", lambda t: t.account_id),
        ("name", lambda t: t.name),
        ("date", lambda t: t.date),
        ("external_id", lambda t: t.external_id),
    ],
)
def test_the_same_rows_as_in(rows, field, pick):
    wanted = [pick(t) for t in rows[::3]] + [None]
    expected = pks(**{f"{field}__in": wanted})
    assert expected, field
    assert pks(**{f"{field}__any": wanted}) == expected
    assert pks(**{f"{field}__any": set(wanted)}) == expected
    assert pks(**{f"{field}__any": [None]}) == [] == pks(**{f"{field}__any": []})
    assert len(pks(**{f"{field}__any": [pick(t) for t in rows]})) == len(
        pks(**{f"{field}__in": [pick(t) for t in rows]})
    )


def test_decimal_values_match_by_value_not_by_text(rows):
    assert pks(amount__any=[Decimal("1.5"), 2.5, Decimal("3.500")]) == sorted(
        t.pk for t in rows[:3]
    )


def test_a_subquery_or_an_expression_works_as_in(rows):
    sub = Transaction.objects.filter(amount__lt=3).values("pk")
    assert pks(pk__any=sub) == pks(pk__in=sub) and len(pks(pk__any=sub)) == 2
    assert pks(amount__any=[F("amount")]) == sorted(t.pk for t in rows)
    assert Transaction.objects.exclude(amount__any=[rows[0].amount]).count() == len(rows) - 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the array form is PostgreSQL's")
def test_postgresql_gets_one_array_parameter(rows):
    wanted = [t.amount for t in rows]
    with CaptureQueriesContext(connection) as seen:
        assert len(pks(amount__any=wanted)) == len(rows)
    sql = seen.captured_queries[-1]["sql"]
    assert "= ANY(" in sql and " IN (" not in sql
    compiled, params = Transaction.objects.filter(amount__any=wanted).query.sql_with_params()
    assert compiled.count("%s") == 1 and params[0] == wanted
