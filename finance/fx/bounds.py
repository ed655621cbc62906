"""Bounds of rates and of the dates they and the reports may carry (decisions.md, "Bounds")."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

MIN_DATE = dt.date(1900, 1, 1)
FUTURE_YEARS = 5
RATE_PLACES = 10
RATE_QUANT = Decimal(1).scaleb(-RATE_PLACES)
# Below 10^12 with at most 10 decimal places fits NUMERIC(24, 10); 15 significant digits is
# what SQLite (whose decimals are floating point) keeps exactly.
RATE_LIMIT = Decimal(10) ** 12
RATE_SIGNIFICANT_DIGITS = 15

DATE_RANGE_MESSAGE = "must be between 1900-01-01 and 5 years from today"
RATE_MESSAGE = (
    "must be a number greater than zero and below 1000000000000, with at most 10 decimal "
    "places and 15 significant digits"
)


def max_date(today: dt.date | None = None) -> dt.date:
    today = today or dt.date.today()
    try:
        return today.replace(year=today.year + FUTURE_YEARS)
    except ValueError:  # 29 February
        return today.replace(year=today.year + FUTURE_YEARS, day=28)


def date_in_bounds(value: dt.date, today: dt.date | None = None) -> bool:
    return MIN_DATE <= value <= max_date(today)


def rate_parse(value: Any) -> Decimal | None:
    """A rate from text or a JSON number (never through a float), or None when it is not one
    within the bounds."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        return None
    try:
        rate = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    if not rate.is_finite() or rate <= 0 or rate >= RATE_LIMIT:
        return None
    digits = rate.normalize().as_tuple()
    if isinstance(digits.exponent, int) and -digits.exponent > RATE_PLACES:
        return None
    if len(digits.digits) > RATE_SIGNIFICANT_DIGITS:
        return None
    return rate.quantize(RATE_QUANT, rounding=ROUND_HALF_EVEN)
