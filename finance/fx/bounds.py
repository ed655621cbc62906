"""Bounds of rates (decisions.md, "Bounds"). Their dates, and the reports', are the ledger's
(core.bounds.date_problem), named with DATE_RANGE_MESSAGE."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from core.bounds import to_decimal

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


def rate_parse(value: Any) -> Decimal | None:
    """A rate from text or a JSON number (never through a float), or None when it is not one
    within the bounds."""
    rate = to_decimal(value)
    if rate is None or rate <= 0 or rate >= RATE_LIMIT:
        return None
    digits = rate.normalize().as_tuple()
    if isinstance(digits.exponent, int) and -digits.exponent > RATE_PLACES:
        return None
    if len(digits.digits) > RATE_SIGNIFICANT_DIGITS:
        return None
    return rate.quantize(RATE_QUANT, rounding=ROUND_HALF_EVEN)
