"""JSON values written in bulk (fast_insert): orjson, and json.dumps for what orjson refuses."""

from __future__ import annotations

import json

from finance.ledger.db.fastinsert import json_text


def test_json_text_is_json_for_what_orjson_takes_and_refuses():
    cells = ["2024-01-02", "Bäcker", "-3,20", ""]
    assert json.loads(json_text(cells)) == cells
    # orjson refuses integers past 64 bits and keys that are not strings: json.dumps writes them
    assert json.loads(json_text([2**70])) == [2**70]
    assert json.loads(json_text({1: "a"})) == {"1": "a"}


def test_prepare_adapts_each_value_as_its_field_does_repeated_or_not():
    """Rows are adapted column by column, keys and days once per distinct value: every value
    still comes out as its own field's adapter makes it (None stays None, a key given as a
    UUID or as its text, a date beside a datetime), and a row of the wrong width is refused."""
    import datetime as dt
    import uuid
    from decimal import Decimal

    import pytest

    from finance.ledger.db.fastinsert import _prepare, value_adapter
    from finance.models import Transaction

    names = (
        "id",
        "family",
        "account",
        "date",
        "amount",
        "currency",
        "name",
        "notes",
        "rule_changes",
    )
    key, other = uuid.uuid4(), uuid.uuid4()
    day = dt.date(2024, 2, 29)
    rows = [
        (uuid.uuid4(), key, other, day, Decimal("1.5"), "EUR", "a", None, {"x": [1]}),
        (uuid.uuid4(), key, key.hex, day, Decimal("-0.00"), "EUR", "b", "n", None),
        (uuid.uuid4(), key, None, dt.date(2024, 3, 1), "2.25", "USD", "c", "", []),
        (uuid.uuid4(), key, other, day, Decimal("1.5"), "EUR", "a", None, {"x": [1]}),
    ]
    fields = [Transaction._meta.get_field(n) for n in names]
    adapters = [value_adapter(f) for f in fields]
    expected = [
        tuple(v if a is None or v is None else a(v) for a, v in zip(adapters, row, strict=True))
        for row in rows
    ]
    columns, params = _prepare(Transaction, names, rows)  # fields, in the columns order

    def plain(values: tuple) -> tuple:  # psycopg's JSON wrappers compare by identity
        return tuple(getattr(v, "obj", v) for v in values)

    assert [plain(p[: len(names)]) for p in params] == [plain(e) for e in expected]
    assert len({p[len(names) :] for p in params}) == 1  # the defaults, the same for every row
    assert len(columns) == len(params[0])
    with pytest.raises(ValueError, match="a row of 2 values"):
        _prepare(Transaction, names, [*rows, (uuid.uuid4(), key)])
