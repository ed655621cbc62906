"""One CSV row to the fields of a transaction, with an error per problem naming column and value."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field
from decimal import Decimal

from imports.parsing.dates import DateError, parse_date
from imports.parsing.numbers import NumberError, format_plain, parse_amount

MAX_NAME = 255
TAG_SPLIT = re.compile(r"[,|]")


@dataclass(frozen=True)
class Columns:
    """Column index of each field in the file (None: the file has no such column)."""

    date: int
    amount: int
    name: int
    category: int | None = None
    tags: int | None = None
    notes: int | None = None
    account: int | None = None
    currency: int | None = None


@dataclass(frozen=True)
class RowRules:
    date_format: str
    number_format: str
    inflows_positive: bool
    default_currency: str
    is_currency: object  # Callable[[str], bool]; kept plain so this module stays pure
    today: dt.date | None = None  # the day dates are checked on (None: each row's today)


@dataclass
class ParsedRow:
    date: dt.date | None = None
    amount: Decimal | None = None
    currency: str = ""
    name: str = ""
    category: str = ""
    tags: list[str] = field(default_factory=list)
    notes: str = ""
    account: str = ""
    errors: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors


def _error(
    errors: list[str], row: int, headers: list[str], index: int, value: str, problem: str
) -> None:
    errors.append(f'row {row}, column "{headers[index]}": value {value!r} {problem}')


def parse_row(
    cells: list[str], *, row_number: int, headers: list[str], columns: Columns, rules: RowRules
) -> ParsedRow:
    """Every problem of the row, each as `row N, column "X": value "v" <problem>`. It runs once
    per row of a file: the cells are read in place, without a call or a closure per row."""
    errors: list[str] = []
    n = len(cells)
    if n == 1 and cells[0].startswith("\x00"):
        errors.append(f"row {row_number}: the line is not valid CSV ({cells[0][1:]})")
        return ParsedRow(errors=errors)

    width = len(headers)
    if n > width and any(c.strip() for c in cells[width:]):
        # A value past the last column usually means an unquoted separator inside a field
        # (1.000,00 in a comma file): reading on would silently shift or cut a value.
        errors.append(
            f"row {row_number}: has {n} values but the header has {width} "
            f"columns (extra: {', '.join(repr(c) for c in cells[width:][:3])})"
        )

    at = columns.date
    raw_date = cells[at].strip() if at < n else ""
    date = None
    if not raw_date:
        _error(errors, row_number, headers, at, raw_date, "is empty: a date is required")
    else:
        try:
            date = parse_date(raw_date, rules.date_format, rules.today)
        except DateError as exc:
            _error(errors, row_number, headers, at, raw_date, str(exc))
    at = columns.amount
    raw_amount = cells[at].strip() if at < n else ""
    amount = None
    try:
        amount = parse_amount(raw_amount, rules.number_format)
        # Ledger sign: positive = money leaving. `inflows_positive` files say the opposite.
        if rules.inflows_positive and amount:
            amount = -amount
    except NumberError as exc:
        _error(errors, row_number, headers, at, raw_amount, f"{exc} ({rules.number_format})")
    at = columns.name
    name = cells[at].strip() if at < n else ""
    if not name:
        _error(errors, row_number, headers, at, name, "is empty: a name is required")
    elif len(name) > MAX_NAME:
        long = f"is longer than {MAX_NAME} characters"
        _error(errors, row_number, headers, at, name[:40] + "…", long)
    at = columns.currency
    currency = (cells[at].strip().upper() if at is not None and at < n else "") or (
        rules.default_currency
    )
    if not rules.is_currency(currency):  # type: ignore[operator]
        where = at if at is not None else columns.amount
        _error(errors, row_number, headers, where, currency, "is not an ISO 4217 currency code")
    at = columns.category
    category = cells[at].strip()[:MAX_NAME] if at is not None and at < n else ""
    at = columns.tags
    raw_tags = cells[at].strip() if at is not None and at < n else ""
    tags = (
        list(dict.fromkeys(t.strip()[:MAX_NAME] for t in TAG_SPLIT.split(raw_tags) if t.strip()))
        if raw_tags
        else []
    )
    at = columns.notes
    notes = cells[at].strip() if at is not None and at < n else ""
    at = columns.account
    account = cells[at].strip()[:MAX_NAME] if at is not None and at < n else ""
    if at is not None and not account:
        _error(
            errors, row_number, headers, at, account, "is empty: the import has no fixed account"
        )
    return ParsedRow(date, amount, currency, name, category, tags, notes, account, errors)


def content_key(row: ParsedRow) -> str:
    """What makes two rows of one account 'identical': date, amount, currency, name."""
    assert row.date is not None and row.amount is not None
    return "\x1f".join((row.date.isoformat(), format_plain(row.amount), row.currency, row.name))


def occurrence_slot(account_key: str, key: str) -> int:
    """A compact hash of (account, content) for counting identical rows of a file: 64 bits,
    as a blake2b digest of 8 bytes was, at a tenth of its cost. Python's string hashes vary
    between processes, never within one, and a file is counted in one."""
    return hash((account_key, key))


def fingerprint(key: str, occurrence: int) -> str:
    """The external id of a row (the account is part of the unique constraint already):
    its content and its occurrence number among identical rows of the same account."""
    return "csv:" + hashlib.sha256(f"{key}\x1f{occurrence}".encode()).hexdigest()[:40]
