"""COPY in the binary format (finance/ledger/db/copyrows.py): values of the types each
column's binary form is made from go as binary and read back as they were; anything else
(a key or a date given as text, a naive time) sends the COPY as text, which still stores it."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest

from finance.ledger.db.fastinsert import fast_insert
from finance.models import Transaction
from tests.factories import AccountFactory, MerchantFactory

NAMES = (
    "id", "family", "account", "date", "amount", "currency", "name", "notes", "external_id",
    "source", "merchant", "pending", "provider_snapshot", "kind", "created_at",
)  # fmt: skip
AT = dt.datetime(2026, 3, 29, 1, 30, 15, 123456, tzinfo=dt.UTC)


def _rows(account, merchant, count=40):
    """`count` rows (past fast_insert's SMALL: they go by COPY) with every kind of value."""
    amounts = [Decimal("-999999999999999.9999"), Decimal("0.0001"), Decimal("-0"), Decimal("12")]
    rows = []
    for i in range(count):
        rows.append(
            (
                uuid.uuid4(),
                account.family_id,
                account.pk,
                dt.date(1900, 1, 1) + dt.timedelta(days=i * 1013),
                amounts[i % 4],
                "EUR",
                f"Bäcker ✓ {i} \\ tab\there",
                None if i % 2 else f"line\nbreak {i}",
                f"ext-{i}",
                "lunchflow",
                merchant.pk if i % 3 else None,
                bool(i % 2),
                {"id": i, "nested": {"ü": [1, None, True]}, "text": 'quote " and \\'}
                if i % 5
                else None,
                Transaction.Kind.CC_PAYMENT if i % 2 else "standard",
                AT + dt.timedelta(microseconds=i),
            )
        )
    return rows


def _read(keys):
    fields = [n if n not in ("family", "account", "merchant") else f"{n}_id" for n in NAMES]
    return {
        values[0]: values
        for values in Transaction.objects.filter(pk__in=keys).order_by().values_list(*fields)
    }


def _expected(row):
    return (*row[:13], str(row[13]), row[14])


@pytest.fixture
def chosen(monkeypatch):
    """The format of each COPY sent to the server while the test runs ("binary" or "text")."""
    import psycopg

    formats = []
    copy = psycopg.Cursor.copy

    def spy(self, statement, *args, **kwargs):
        formats.append("binary" if "FORMAT BINARY" in str(statement) else "text")
        return copy(self, statement, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "copy", spy)
    return formats


def test_binary_copy_stores_every_value_as_it_was(postgres_only, chosen):
    account = AccountFactory(currency="EUR")
    merchant = MerchantFactory(family=account.family)
    rows = _rows(account, merchant)
    assert fast_insert(Transaction, NAMES, rows) == len(rows)
    assert chosen == ["binary"]
    stored = _read([r[0] for r in rows])
    for row in rows:
        assert stored[row[0]] == _expected(row)
    # JSON is stored as the object, not as a JSON string of its text
    assert Transaction.objects.filter(pk=rows[1][0], provider_snapshot__nested__ü=[1, None, True])


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("id", "text"),  # a key given as its text
        ("date", "datetime"),  # a datetime where a date is stored
        ("created_at", "naive"),  # a time without its zone
        ("pending", 1),  # an int where a bool is stored
    ],
)
def test_values_the_binary_form_does_not_take_go_as_text(postgres_only, chosen, column, value):
    account = AccountFactory(currency="EUR")
    merchant = MerchantFactory(family=account.family)
    rows = [list(r) for r in _rows(account, merchant)]
    at = NAMES.index(column)
    row = rows[7]
    if value == "text":
        row[at] = str(row[at])
    elif value == "datetime":
        row[at] = dt.datetime.combine(row[at], dt.time(12))
    elif value == "naive":
        row[at] = row[at].replace(tzinfo=None)
    else:
        row[at] = value
    original = list(row)
    assert fast_insert(Transaction, NAMES, rows) == len(rows)
    assert chosen == ["text"]
    stored = _read([uuid.UUID(str(r[0])) for r in rows])
    assert len(stored) == len(rows)
    # the odd value is stored as the value it stands for, the rest of its row as given
    if value == "text":
        original[at] = uuid.UUID(original[at])
    elif value == "datetime":
        original[at] = original[at].date()
    elif value == "naive":
        original[at] = original[at].replace(tzinfo=dt.UTC)  # the server's zone: UTC
    else:
        original[at] = True
    assert stored[uuid.UUID(str(row[0]))] == _expected(original)
