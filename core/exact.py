"""Exact decimals on both databases (docs/decisions.md, "Exact money on SQLite").

PostgreSQL's NUMERIC is exact. SQLite has no decimal type: a DecimalField column has NUMERIC
affinity, so 9999999999999.9999 is stored as an 8-byte float (15-16 significant digits) and
SQL's SUM() adds floats. On SQLite an `ExactDecimalField` is therefore a TEXT column holding
the canonical fixed-scale string (`-12.5000`, never `-0.0000`), and the SQL that computes with
these columns uses functions registered on every SQLite connection that work in Python's
Decimal:

- `exact_sum(x)`: SUM as an aggregate or a window function (`ExactSum`);
- `exact_cmp(a, b)`: -1, 0 or 1, behind the field's `<`, `<=`, `>`, `>=` lookups (a text
  comparison would put "10" before "9"); a float comparison decides every row not within a
  hair of the bound, `exact_cmp` the rest, so a filter costs about what it did;
- `exact_key(x)`: a text key in numeric order (`ExactOrder`, for ordering by a money column).

On PostgreSQL the field is a plain `numeric(p, s)`, the lookups and `ExactSum` are Django's
own, and its migrations emit no SQL."""

from __future__ import annotations

import decimal
from decimal import Decimal
from typing import Any

from django.db import NotSupportedError, models
from django.db.backends.signals import connection_created
from django.db.models import lookups
from django.db.models.expressions import Func

from core.keys import uuid7_hex

# Wide enough for a sum of any number of NUMERIC(38, x) values without rounding.
WIDE = decimal.Context(prec=120, traps=[decimal.InvalidOperation, decimal.Overflow])
_KEY_INT, _KEY_FRAC = 60, 20  # digits of an ordering key: wider than any column's
# A float comparison decides rows further than this (relative) from the bound: SQLite's text
# to float conversion is off by a few units in the 16th digit at most.
_MARGIN = 1e-9


def _number(value: Any) -> Decimal | None:
    """What SQLite hands a function (text, an integer, or a float from an older row)."""
    if value is None:
        return None
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, bytes):
        value = value.decode()
    return Decimal(value)


_QUANTUM = [Decimal(1).scaleb(-places) for places in range(40)]
# Rounds as PostgreSQL's numeric(p, s) does (half away from zero).
_ROUND = decimal.Context(prec=120, rounding=decimal.ROUND_HALF_UP, traps=[decimal.Overflow])


def canonical(value: Decimal, places: int) -> str:
    """`value` at `places` decimal places in plain notation, zero without a sign."""
    quantized = value.quantize(_QUANTUM[places], context=_ROUND)
    if not quantized:
        quantized = quantized.copy_abs()
    return f"{quantized:f}"


def _operand(value: Decimal, places: int) -> str:
    """A lookup's value: canonical when a column can hold it (so that `=` and `IN` compare
    the texts), else its plain notation (equal to no stored value, compared by exact_cmp)."""
    text = canonical(value, places)
    return text if Decimal(text) == value else f"{value:f}"


def exact_cmp(a: Any, b: Any) -> int | None:
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return None
    return (x > y) - (x < y)


def exact_key(value: Any) -> str | None:
    """A text that sorts as the number does: sign, then the digits (complemented when
    negative) of the integer part padded to _KEY_INT and the fraction to _KEY_FRAC."""
    number = _number(value)
    if number is None:
        return None
    whole, _, frac = f"{number.copy_abs():f}".partition(".")
    digits = whole.zfill(_KEY_INT) + frac.ljust(_KEY_FRAC, "0")[:_KEY_FRAC]
    if number < 0:
        return "0" + digits.translate(str.maketrans("0123456789", "9876543210"))
    return "1" + digits


class _ExactSum:
    """exact_sum(x) for sqlite3's create_window_function: an aggregate and a window function.

    A column's canonical texts share their number of decimal places: they are added as
    integers of that unit (`-12.5000` is -125000), anything else as a Decimal."""

    def __init__(self) -> None:
        self.units = 0
        self.places = -1  # of the texts added as integers; -1: none yet
        self.other = Decimal(0)
        self.count = 0

    def _add(self, value: Any, sign: int) -> None:
        if type(value) is str:
            whole, _, fraction = value.partition(".")
            if self.places < 0:
                self.places = len(fraction)
            if len(fraction) == self.places and "e" not in value and "E" not in value:
                self.units += sign * int(whole + fraction)
                self.count += sign
                return
        number = _number(value)
        self.other = WIDE.add(self.other, number if sign > 0 else -number)
        self.count += sign

    def step(self, value: Any) -> None:
        if value is not None:
            self._add(value, 1)

    def inverse(self, value: Any) -> None:
        if value is not None:
            self._add(value, -1)

    def value(self) -> str | None:
        if not self.count:
            return None  # SUM of no rows is NULL
        total = WIDE.add(Decimal(self.units).scaleb(-max(self.places, 0), context=WIDE), self.other)
        return f"{total:f}"  # plain notation: SQLite would read "1E+13" back as a float

    def finalize(self) -> str | None:
        return self.value()


def exact_add(value: Any, delta: Any, places: int) -> str | None:
    """`value + delta` as a column's canonical text (a balance row moved in place by a new
    flow, finance/ledger/db/series.py)."""
    a, b = _number(value), _number(delta)
    if a is None or b is None:
        return None
    return canonical(WIDE.add(a, b), places)


def register_sqlite_functions(connection: Any) -> None:
    """Give a new SQLite connection the exact functions (connection_created), and `uuid7()`
    (core/keys.py, as the hex a UUIDField stores on SQLite) for statements that make keys."""
    raw = connection.connection
    raw.create_function("uuid7", 0, uuid7_hex)
    raw.create_window_function("exact_sum", 1, _ExactSum)
    raw.create_function("exact_cmp", 2, exact_cmp, deterministic=True)
    raw.create_function("exact_key", 1, exact_key, deterministic=True)
    raw.create_function("exact_add", 3, exact_add, deterministic=True)


def _on_connection_created(sender: Any, connection: Any, **kwargs: Any) -> None:
    if connection.vendor == "sqlite":
        register_sqlite_functions(connection)


connection_created.connect(_on_connection_created, dispatch_uid="core.exact")


class ExactDecimalField(models.DecimalField):
    """A DecimalField that is exact on SQLite too (a TEXT column of canonical strings)."""

    def get_internal_type(self) -> str:
        # Not "DecimalField": SQLite's backend would read every value through a float.
        return "ExactDecimalField"

    def db_type(self, connection: Any) -> str | None:
        if connection.vendor == "sqlite":
            return "text"
        return connection.data_types["DecimalField"] % self.db_type_parameters(connection)

    def cast_db_type(self, connection: Any) -> str | None:
        return self.db_type(connection)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if connection.vendor != "sqlite":
            return super().get_db_prep_value(value, connection, prepared)
        if not prepared:
            value = self.get_prep_value(value)
        if value is None or hasattr(value, "as_sql"):
            return value
        return _operand(self.to_python(value), self.decimal_places)

    def get_db_prep_save(self, value: Any, connection: Any) -> Any:
        if connection.vendor != "sqlite" or value is None or hasattr(value, "as_sql"):
            return super().get_db_prep_save(value, connection)
        return canonical(self.to_python(value), self.decimal_places)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Decimal | None:
        if type(value) is str:
            return Decimal(value)
        if value is None or isinstance(value, Decimal):
            return value
        return _number(value)

    def sqlite_text(self, value: Decimal) -> str:
        """A Decimal as this column stores it on SQLite (for raw writers: fast_insert)."""
        return canonical(value, self.decimal_places)


def _compare(lhs: str, lhs_params: list[Any], rhs: str, rhs_params: list[Any], op: str) -> tuple:
    """`lhs <op> rhs` exactly on SQLite (see the module's docstring)."""
    exact = f"exact_cmp({lhs}, {rhs}) {op} 0"
    if not (rhs == "%s" and len(rhs_params) == 1 and isinstance(rhs_params[0], str)):
        return exact, [*lhs_params, *rhs_params]
    bound = float(Decimal(rhs_params[0]))
    low, high = bound - abs(bound) * _MARGIN - _MARGIN, bound + abs(bound) * _MARGIN + _MARGIN
    # Beyond the band around the bound the floats decide; within it, the exact comparison.
    strict = op[0]
    beyond = high if strict == ">" else low
    sql = (
        f"(CAST({lhs} AS REAL) {strict} %s OR (CAST({lhs} AS REAL) BETWEEN %s AND %s AND {exact}))"
    )
    return sql, [*lhs_params, beyond, *lhs_params, low, high, *lhs_params, *rhs_params]


_OPERATORS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


class _ExactComparison:
    """gt, gte, lt, lte of an exact decimal: `_compare` on SQLite, Django's own elsewhere."""

    def as_sqlite(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        op = _OPERATORS[self.lookup_name]
        return _compare(lhs, list(lhs_params), rhs, list(rhs_params), op)


for _lookup in (
    lookups.GreaterThan,
    lookups.GreaterThanOrEqual,
    lookups.LessThan,
    lookups.LessThanOrEqual,
):
    ExactDecimalField.register_lookup(
        type(f"Exact{_lookup.__name__}", (_ExactComparison, _lookup), {})
    )


@ExactDecimalField.register_lookup
class ExactRange(lookups.Range):
    def as_sqlite(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        _, rhs_params = self.process_rhs(compiler, connection)
        if not self.rhs_is_direct_value() or len(rhs_params) != 2:
            raise NotSupportedError("an exact decimal's range takes two values")
        low, low_params = _compare(lhs, list(lhs_params), "%s", [rhs_params[0]], ">=")
        high, high_params = _compare(lhs, list(lhs_params), "%s", [rhs_params[1]], "<=")
        return f"({low} AND {high})", [*low_params, *high_params]


class ExactSum(models.Sum):
    """SUM: exact on SQLite (exact_sum), Django's own on PostgreSQL."""

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        return self.as_sql(compiler, connection, function="EXACT_SUM", **extra)


class ExactOrder(Func):
    """Order by a decimal column: `exact_key` of it on SQLite, the column itself elsewhere."""

    function = "exact_key"
    output_field = models.TextField()

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        if connection.vendor == "sqlite":
            return super().as_sql(compiler, connection, **extra)
        return compiler.compile(self.source_expressions[0])


def sqlite_text_columns(columns: list[tuple[str, str, int]]) -> Any:
    """A migration operation that rewrites decimal columns, now TEXT on SQLite, into canonical
    strings (Django's table rebuild copied the old float values as `12.5`, `1e+20`). The old
    values were floats: digits they had lost stay lost. Nothing on PostgreSQL."""
    from django.db import migrations

    def forwards(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "sqlite":
            return
        for table, column, places in columns:
            # Table and column names are the migration's constants.
            schema_editor.execute(
                f'UPDATE "{table}" SET "{column}" = CASE WHEN CAST("{column}" AS REAL) = 0 '  # noqa: S608
                f"THEN printf('%.{places}f', 0) ELSE printf('%.{places}f', \"{column}\") END "
                f'WHERE "{column}" IS NOT NULL'
            )

    return migrations.RunPython(forwards, migrations.RunPython.noop, elidable=True)
