"""What every bank statement format reads into: statements (an account, its currency and
balances) and their entries (one future transaction each). Pure: no Django, no database."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

MAX_NAME = 255
MAX_NOTES = 2000
MAX_ID = 200  # an upstream id longer than this is not an id a bank would send
MAX_DECIMALS = 4
MAX_ABS_AMOUNT = Decimal(10) ** 13  # decisions.md "Bounds": amounts below 10^13
MIN_DATE = dt.date(1900, 1, 1)
_QUANTUM = Decimal(1).scaleb(-MAX_DECIMALS)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACES = re.compile(r"\s+")


class FormatError(ValueError):
    """The file as a whole cannot be read: the import fails, naming the place."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


class ValueProblem(ValueError):
    """One value of one entry is unusable: that row is invalid, the rest of the file is read."""


@dataclass
class Statement:
    """One account's statement in the file. `account` is the number or IBAN the household maps
    to a ledger account; balances are in the file's sign (positive: money on the account)."""

    number: int
    line: int
    account: str = ""
    currency: str = ""
    kind: str = ""
    reference: str = ""
    last_line: int = 0
    opening_balance: Decimal | None = None
    opening_date: dt.date | None = None
    closing_balance: Decimal | None = None
    closing_date: dt.date | None = None
    entries: int = 0


@dataclass
class Entry:
    """One booking. `amount` is in the ledger sign (positive: money leaving the account);
    `upstream_id` is the bank's own id for it, empty when the format or the bank has none."""

    line: int
    statement: Statement
    raw: list[str]
    date: dt.date | None = None
    amount: Decimal | None = None
    currency: str = ""
    name: str = ""
    notes: str = ""
    category: str = ""
    tags: list[str] = field(default_factory=list)
    upstream_id: str = ""
    # Read but not to be published unless the household says so (a pending CAMT entry).
    skipped: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors

    def problem(self, what: str, value: str, message: str) -> None:
        shown = value if len(value) <= 60 else value[:57] + "..."
        self.errors.append(f"line {self.line}, {what}: value {shown!r} {message}")


@dataclass
class StatementFile:
    """An opened statement file: its field names (the rows' `raw`), its text encoding, and its
    statements and entries in file order, each statement after its last entry."""

    headers: list[str]
    encoding: str
    items: Iterator[Entry | Statement]


def clean_text(value: str | None, limit: int = MAX_NAME) -> str:
    """One line of printable text: control characters dropped, runs of spaces folded."""
    if not value:
        return ""
    return _SPACES.sub(" ", _CONTROL.sub("", value)).strip()[:limit]


def plain_decimal(text: str, *, comma: bool = False) -> Decimal:
    """A plain decimal number as banks' machine formats write it (`-1234.56`, `+.5`, and with
    `comma` also `1234,56`): no grouping, at most 4 decimals, below 10^13."""
    value = text.strip()
    if comma and "," in value and "." not in value:
        value = value.replace(",", ".")
    if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", value):
        raise ValueProblem("is not a number")
    try:
        number = Decimal(value)
    except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
        raise ValueProblem("is not a number") from None
    exponent = number.as_tuple().exponent
    if isinstance(exponent, int) and -exponent > MAX_DECIMALS:
        if number != number.quantize(_QUANTUM):
            raise ValueProblem(f"has more than {MAX_DECIMALS} decimal places")
        number = number.quantize(_QUANTUM)
    if abs(number) >= MAX_ABS_AMOUNT:
        raise ValueProblem("is too large (at most 13 integer digits)")
    return number


def checked_date(value: dt.date, *, today: dt.date | None = None) -> dt.date:
    """decisions.md "Bounds": dates from 1900-01-01 to today + 5 years."""
    today = today or dt.date.today()
    try:
        latest = today.replace(year=today.year + 5)
    except ValueError:  # 29 February
        latest = today.replace(year=today.year + 5, day=28)
    if not MIN_DATE <= value <= latest:
        raise ValueProblem(f"is outside {MIN_DATE.isoformat()} to {latest.isoformat()}")
    return value


def ymd(text: str) -> dt.date:
    """`YYYYMMDD` or `YYYY-MM-DD` at the start of `text` (what follows, a time, is ignored)."""
    value = text.strip()
    match = re.match(r"(\d{4})-?(\d{2})-?(\d{2})", value)
    if match is None:
        raise ValueProblem("is not a date (YYYYMMDD or YYYY-MM-DD)")
    try:
        day = dt.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        raise ValueProblem("is not a real date") from None
    return checked_date(day)
