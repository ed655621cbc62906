"""Money helpers: Decimal amounts beside an ISO currency, minor units only at the edges."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Context, Decimal

from finance.currencies import minor_units

_QUANTS = {n: Decimal(1).scaleb(-n) for n in range(0, 5)}
# Wider than any stored value (NUMERIC(38, 4)): the default 28 digits cannot quantize a
# holdings' value near its bound (10^30) to the currency's places.
_WIDE = Context(prec=60)


def minor_unit(currency: str) -> Decimal:
    """The currency's smallest amount: Decimal("0.01"), Decimal("1") for JPY."""
    return _QUANTS[minor_units(currency)]


def quantize(amount: Decimal, currency: str) -> Decimal:
    return amount.quantize(_QUANTS[minor_units(currency)], rounding=ROUND_HALF_EVEN, context=_WIDE)


def subtract(a: Decimal, b: Decimal) -> Decimal:
    """a - b exactly, however wide."""
    return _WIDE.subtract(a, b)


def format_amount(amount: Decimal, currency: str) -> str:
    """A plain decimal string at the currency's precision: "25.00", "-1250.50", "1200"."""
    value = quantize(amount, currency)
    if value == 0:
        value = abs(value)  # never "-0.00"
    return f"{value:f}"


def to_minor_units(amount: Decimal, currency: str) -> int:
    return int(quantize(amount, currency).scaleb(minor_units(currency)))
