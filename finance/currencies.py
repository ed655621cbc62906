"""ISO 4217 currencies and their minor units."""

from __future__ import annotations

from functools import lru_cache

import pycountry

# Currencies whose minor unit is not 2 digits (ISO 4217 list one, current edition).
_ZERO = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"
_THREE = "BHD IQD JOD KWD LYD OMR TND"
_FOUR = "CLF UYW"
_EXPONENTS = {
    **dict.fromkeys(_ZERO.split(), 0),
    **dict.fromkeys(_THREE.split(), 3),
    **dict.fromkeys(_FOUR.split(), 4),
}
# Funds, metals and testing codes that no bank account holds.
_NON_MONEY = frozenset("XAG XAU XBA XBB XBC XBD XDR XPD XPT XSU XTS XUA XXX".split())


@lru_cache(maxsize=1)
def currency_codes() -> frozenset[str]:
    return frozenset(c.alpha_3 for c in pycountry.currencies) - _NON_MONEY


def is_currency(code: str) -> bool:
    return isinstance(code, str) and code in currency_codes()


def minor_units(code: str) -> int:
    return _EXPONENTS.get(code, 2)
