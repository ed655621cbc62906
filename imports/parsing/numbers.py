"""Amounts in the number formats banks export. A value that does not fit the configured format
is an error, never a guess: `1.000` is one thousand in `1.234,56`, one in `1,234.56`, and invalid
in `1 234,56` and `1,234`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

MAX_DECIMAL_PLACES = 4
MAX_INTEGER_DIGITS = 13  # core.bounds: amounts below 10^13


@dataclass(frozen=True)
class NumberFormat:
    thousands: tuple[str, ...]  # accepted grouping characters
    decimal: str | None  # None: whole numbers only


NUMBER_FORMATS: dict[str, NumberFormat] = {
    "1,234.56": NumberFormat((",",), "."),
    "1.234,56": NumberFormat((".",), ","),
    # Spaces group thousands: plain, no-break and narrow no-break (French, Swiss exports).
    "1 234,56": NumberFormat((" ", "\u00a0", "\u202f"), ","),
    "1,234": NumberFormat((",",), None),
}
DEFAULT_NUMBER_FORMAT = "1,234.56"

_CURRENCY_SIGNS = "$€£¥₹₽₩₪₫₴₦₱฿"


def _simple(fmt: NumberFormat) -> re.Pattern[str]:
    whole = f"-?[0-9]{{1,{MAX_INTEGER_DIGITS}}}"
    if fmt.decimal is None:
        return re.compile(whole)
    return re.compile(f"{whole}(?:{re.escape(fmt.decimal)}[0-9]{{1,{MAX_DECIMAL_PLACES}}})?")


# Most cells are a plain number in the format's own decimal mark (-1234.56): they need none of
# the general rules below, and give the same value through Decimal directly (5x quicker).
_SIMPLE = {name: _simple(fmt) for name, fmt in NUMBER_FORMATS.items()}


class NumberError(ValueError):
    pass


def _integer_part(text: str, fmt: NumberFormat) -> str:
    if not text:
        raise NumberError("no digits")
    if text.isdigit() and text.isascii():
        return text
    for sep in fmt.thousands:
        if sep in text:
            groups = text.split(sep)
            first, rest = groups[0], groups[1:]
            ok = (
                first.isascii()
                and first.isdigit()
                and 1 <= len(first) <= 3
                and all(g.isascii() and g.isdigit() and len(g) == 3 for g in rest)
            )
            if ok:
                return "".join(groups)
            break
    raise NumberError("does not match the number format")


def parse_amount(raw: str, number_format: str) -> Decimal:
    """The amount a cell means in `number_format`; `(12.50)` and a trailing minus are negative."""
    fmt = NUMBER_FORMATS[number_format]
    if _SIMPLE[number_format].fullmatch(raw):
        value = Decimal(raw if fmt.decimal in (None, ".") else raw.replace(fmt.decimal, "."))
        return value if value else abs(value)  # -0.00 is 0.00, as below
    return _parse_general(raw, fmt)


def _parse_general(raw: str, fmt: NumberFormat) -> Decimal:
    """`parse_amount` by the general rules: signs, brackets, currency marks, grouping."""
    text = raw.strip()
    for sign in _CURRENCY_SIGNS:
        text = text.replace(sign, "")
    text = text.strip()
    negative = False
    if text.startswith("(") and text.endswith(")"):
        negative, text = True, text[1:-1].strip()
    if text and text[0] in "+-":
        negative, text = (negative != (text[0] == "-")), text[1:].strip()
    elif text.endswith("-"):
        negative, text = (not negative), text[:-1].strip()
    if not text:
        raise NumberError("is empty")
    if fmt.decimal is not None and fmt.decimal in text:
        whole, _, fraction = text.rpartition(fmt.decimal)
        if not (fraction.isascii() and fraction.isdigit()):
            raise NumberError("does not match the number format")
        if len(fraction) > MAX_DECIMAL_PLACES:
            raise NumberError(f"has more than {MAX_DECIMAL_PLACES} decimal places")
        whole = _integer_part(whole, fmt) if whole else "0"
    else:
        whole, fraction = _integer_part(text, fmt), ""
    if len(whole.lstrip("0")) > MAX_INTEGER_DIGITS:
        raise NumberError(f"has more than {MAX_INTEGER_DIGITS} integer digits")
    try:
        value = Decimal(f"{whole}.{fraction}" if fraction else whole)
    except InvalidOperation:  # pragma: no cover - the checks above leave only digits
        raise NumberError("is not a number") from None
    return -value if negative and value else value


_PLAIN = re.compile(r"^-?\d+(\.\d+)?$")


def format_plain(value: Decimal) -> str:
    """A canonical text for a parsed amount (fingerprints): no exponent, no trailing zeros."""
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
