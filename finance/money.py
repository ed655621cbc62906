"""Money helpers: Decimal amounts beside an ISO currency, minor units only at the edges."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from finance.currencies import minor_units

_QUANTS = {n: Decimal(1).scaleb(-n) for n in range(0, 5)}


def minor_unit(currency: str) -> Decimal:
    """The currency's smallest amount: Decimal("0.01"), Decimal("1") for JPY."""
    return _QUANTS[minor_units(currency)]


def quantize(amount: Decimal, currency: str) -> Decimal:
    return amount.quantize(_QUANTS[minor_units(currency)], rounding=ROUND_HALF_EVEN)


def format_amount(amount: Decimal, currency: str) -> str:
    """A plain decimal string at the currency's precision: "25.00", "-1250.50", "1200"."""
    value = quantize(amount, currency)
    if value == 0:
        value = abs(value)  # never "-0.00"
    return f"{value:f}"


def to_minor_units(amount: Decimal, currency: str) -> int:
    return int(quantize(amount, currency).scaleb(minor_units(currency)))
