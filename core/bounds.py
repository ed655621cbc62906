"""What the ledger can store safely (decisions.md, "Bounds: money and dates"), checked at every
entrance: the API, imports, provider syncs, trades and the admin's forms.

An amount is below 10^13 in absolute value with at most 4 decimal places, so that balances and
sums of any number of rows fit the NUMERIC(38, 4) columns that hold them. A date runs from
1900-01-01 to five years after today."""

from __future__ import annotations

import datetime as dt
import functools
from decimal import Decimal, InvalidOperation
from typing import Any

MAX_AMOUNT = Decimal("9999999999999.9999")
AMOUNT_LIMIT_TEXT = "must be below 10^13 in absolute value"
MIN_DATE = dt.date(1900, 1, 1)
FUTURE_YEARS = 5
# A trade's quantity and price (8 decimal places) stay below this.
MAX_QUANTITY = Decimal("999999999999999.99999999")


def max_date(today: dt.date | None = None) -> dt.date:
    return _max_date(today or dt.date.today())


@functools.lru_cache(maxsize=4)
def _max_date(today: dt.date) -> dt.date:
    """(A parse checks a million dates: the bound is computed once a day.)"""
    try:
        return today.replace(year=today.year + FUTURE_YEARS)
    except ValueError:  # 29 February
        return today.replace(year=today.year + FUTURE_YEARS, day=28)


def date_problem(value: dt.date, today: dt.date | None = None) -> str | None:
    """Why a date cannot be stored (on `today`, default the server's), or None."""
    if value < MIN_DATE:
        return f"must be on or after {MIN_DATE.isoformat()}"
    latest = max_date(today)
    if value > latest:
        return f"must be on or before {latest.isoformat()} (five years from today)"
    return None


def to_decimal(value: Any) -> Decimal | None:
    """A finite Decimal from a JSON number, a Decimal or a numeric string; None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        return None
    try:
        number = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def amount_problem(value: Decimal, *, limit: Decimal = MAX_AMOUNT) -> str | None:
    """Why a finite amount cannot be stored, or None."""
    if value.copy_abs() > limit:  # copy_abs: exact, no context (abs() overflows on 1e999999999)
        return AMOUNT_LIMIT_TEXT if limit == MAX_AMOUNT else f"must be at most {limit}"
    return None


def validate_amount(value: Decimal) -> None:
    """A model field validator (the admin's forms): the same bound as the API's."""
    from django.core.exceptions import ValidationError

    problem = amount_problem(value) if value is not None else None
    if problem:
        raise ValidationError(f"The amount {problem}.")


def validate_date(value: dt.date) -> None:
    from django.core.exceptions import ValidationError

    problem = date_problem(value) if value is not None else None
    if problem:
        raise ValidationError(f"The date {problem}.")
