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


def _cell(cells: list[str], index: int | None) -> str:
    if index is None or index >= len(cells):
        return ""
    return cells[index].strip()


def parse_row(
    cells: list[str], *, row_number: int, headers: list[str], columns: Columns, rules: RowRules
) -> ParsedRow:
    """Every problem of the row, each as `row N, column "X": value "v" <problem>`."""
    out = ParsedRow()
    if len(cells) == 1 and cells[0].startswith("\x00"):
        out.errors.append(f"row {row_number}: the line is not valid CSV ({cells[0][1:]})")
        return out

    if len(cells) > len(headers) and any(c.strip() for c in cells[len(headers) :]):
        # A value past the last column usually means an unquoted separator inside a field
        # (1.000,00 in a comma file): reading on would silently shift or cut a value.
        out.errors.append(
            f"row {row_number}: has {len(cells)} values but the header has {len(headers)} "
            f"columns (extra: {', '.join(repr(c) for c in cells[len(headers) :][:3])})"
        )

    def err(index: int, value: str, problem: str) -> None:
        out.errors.append(f'row {row_number}, column "{headers[index]}": value {value!r} {problem}')

    raw_date = _cell(cells, columns.date)
    if not raw_date:
        err(columns.date, raw_date, "is empty: a date is required")
    else:
        try:
            out.date = parse_date(raw_date, rules.date_format, rules.today)
        except DateError as exc:
            err(columns.date, raw_date, str(exc))
    raw_amount = _cell(cells, columns.amount)
    try:
        amount = parse_amount(raw_amount, rules.number_format)
        # Ledger sign: positive = money leaving. `inflows_positive` files say the opposite.
        out.amount = -amount if rules.inflows_positive and amount else amount
    except NumberError as exc:
        err(columns.amount, raw_amount, f"{exc} ({rules.number_format})")
    out.name = _cell(cells, columns.name)
    if not out.name:
        err(columns.name, out.name, "is empty: a name is required")
    elif len(out.name) > MAX_NAME:
        err(columns.name, out.name[:40] + "…", f"is longer than {MAX_NAME} characters")
    currency = _cell(cells, columns.currency).upper() or rules.default_currency
    if not rules.is_currency(currency):  # type: ignore[operator]
        err(
            columns.currency if columns.currency is not None else columns.amount,
            currency,
            "is not an ISO 4217 currency code",
        )
    out.currency = currency
    out.category = _cell(cells, columns.category)[:MAX_NAME]
    raw_tags = _cell(cells, columns.tags)
    if raw_tags:
        out.tags = list(
            dict.fromkeys(t.strip()[:MAX_NAME] for t in TAG_SPLIT.split(raw_tags) if t.strip())
        )
    out.notes = _cell(cells, columns.notes)
    out.account = _cell(cells, columns.account)[:MAX_NAME]
    if columns.account is not None and not out.account:
        err(columns.account, out.account, "is empty: the import has no fixed account")
    return out


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
