"""QIF (Quicken Interchange Format): bank, cash, credit-card and other asset/liability
sections, each record a few lines ended by `^`. Dates are US (month first) unless the import's
`date_format` starts with the day; two-digit years as Quicken writes them (`1/15'24` is 2024,
`1/15' 4` is 2004, `12/31/99` is 1999).

Read line by line (a QIF file can be large and libraries read it whole); a value problem makes
its row invalid, a structural one (no header, an unknown section, a record cut off) fails the
file naming the line."""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import BinaryIO

from imports.parsing.csvfile import detect_encoding
from imports.parsing.numbers import NumberError, parse_amount
from imports.parsing.statements import (
    MAX_NAME,
    MAX_NOTES,
    Entry,
    FormatError,
    Statement,
    StatementFile,
    ValueProblem,
    checked_date,
    clean_text,
)

HEADERS = ["D", "T", "P", "M", "L", "N", "C", "S"]
CASH_SECTIONS = {
    "bank": "bank",
    "cash": "cash",
    "ccard": "credit_card",
    "oth a": "other_asset",
    "oth l": "other_liability",
}
INVESTMENT_SECTIONS = {"invst"}
LIST_SECTIONS = {"cat", "class", "memorized", "security", "prices", "bill", "invoice", "budget"}
RECORD_FIELDS = set("DTUPMLNCAS E$%FXYIQO".replace(" ", ""))
INVESTMENT_NOTE = "investment transactions are not imported: left out"
_DATE = re.compile(r"^(\d{1,4})\s*[/.\-]\s*(\d{1,2})\s*(['/.\-])\s*(\d{1,4})$")


def date_order(date_format: str) -> str:
    """ "dmy", "mdy" or "ymd" from the import's date_format (only its order matters here)."""
    if date_format.startswith("%d"):
        return "dmy"
    if date_format.startswith("%Y"):
        return "ymd"
    return "mdy"


def parse_qif_date(raw: str, order: str) -> dt.date:
    match = _DATE.match(raw.strip().replace(" ", "") if "'" in raw else raw.strip())
    if match is None:
        raise ValueProblem("is not a QIF date")
    first, second, sep, last = match.groups()
    if len(first) == 4:  # 2024-01-15 whatever the order
        year, month, day = int(first), int(second), int(last)
    elif len(last) in (1, 2) or len(last) == 4:
        month, day = (int(first), int(second)) if order != "dmy" else (int(second), int(first))
        short = int(last)
        if len(last) == 4:
            year = short
        elif sep == "'":
            year = 2000 + short  # Quicken's apostrophe marks the years 2000 and later
        else:
            year = 2000 + short if short < 70 else 1900 + short
    else:
        raise ValueProblem("has a year of 3 digits")
    try:
        value = dt.date(year, month, day)
    except ValueError:
        order_name = "month/day" if order != "dmy" else "day/month"
        raise ValueProblem(f"is not a real date (read as {order_name}/year)") from None
    return checked_date(value)


def read_qif(
    stream: BinaryIO,
    *,
    default_currency: str,
    date_format: str,
    number_format: str,
    inflows_positive: bool = True,
) -> StatementFile:
    encoding = detect_encoding(stream)
    stream.seek(0)
    text = io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline=None)
    reader = _Reader(default_currency, date_order(date_format), number_format, inflows_positive)
    return StatementFile(headers=list(HEADERS), encoding=encoding, items=reader.read(text))


class _Reader:
    def __init__(self, currency: str, order: str, number_format: str, inflows_positive: bool):
        self.currency = currency
        self.order = order
        self.number_format = number_format
        self.inflows_positive = inflows_positive
        self.count = 0

    def read(self, text: io.TextIOBase) -> Iterator[Entry | Statement]:
        section = ""
        statement: Statement | None = None
        account_name = ""
        in_account = autoswitch = False
        record: list[tuple[int, str, str]] = []
        seen_header = False
        line_no = 0
        for line_no, line in enumerate(text, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            if line.startswith("!"):
                if record:
                    raise FormatError(
                        line_no, f"a header inside the record started at line {record[0][0]}"
                    )
                seen_header = True
                header = line[1:].strip()
                lowered = header.lower()
                if lowered == "option:autoswitch":
                    autoswitch = True
                elif lowered == "clear:autoswitch":
                    autoswitch = False
                elif lowered == "account":
                    in_account = True
                elif lowered.startswith("type:"):
                    kind = lowered[5:].strip()
                    known = CASH_SECTIONS.keys() | INVESTMENT_SECTIONS | LIST_SECTIONS
                    if kind not in known:
                        raise FormatError(line_no, f"unknown section {header!r}")
                    if statement is not None:
                        yield statement
                        statement = None
                    in_account, section = False, kind
                    if kind in CASH_SECTIONS or kind in INVESTMENT_SECTIONS:
                        self.count += 1
                        statement = Statement(
                            number=self.count,
                            line=line_no,
                            account=account_name or header[5:].strip(),
                            currency=self.currency,
                            kind=CASH_SECTIONS.get(kind, "investment"),
                        )
                        account_name = ""  # a later section names its own account, or none
                elif not lowered.startswith(("option:", "clear:")):
                    raise FormatError(line_no, f"unknown header {line.strip()!r}")
                continue
            if not seen_header:
                raise FormatError(
                    line_no, "not a QIF file: expected a !Type: or !Account header first"
                )
            code, value = line[0], line[1:]
            if code != "^":
                if section in CASH_SECTIONS and not in_account and code not in RECORD_FIELDS:
                    raise FormatError(line_no, f"unknown QIF field {line[:20]!r}")
                record.append((line_no, code, value))
                continue
            if in_account:
                fields = {c: v.strip() for _, c, v in record}
                if not autoswitch:  # in AutoSwitch mode the blocks only list the accounts
                    account_name = clean_text(fields.get("N")) or account_name
            elif statement is not None and record:
                statement.last_line = line_no
                statement.entries += 1
                yield self._entry(record, statement, section)
            record = []
        if record:
            raise FormatError(
                line_no,
                f"the file ends inside the record started at line {record[0][0]} "
                "(no closing ^): truncated?",
            )
        if not seen_header:
            raise FormatError(1, "not a QIF file: it is empty")
        if statement is not None:
            yield statement
        if self.count == 0:
            raise FormatError(None, "the file has no bank, cash or credit card section")

    def _entry(
        self, record: list[tuple[int, str, str]], statement: Statement, section: str
    ) -> Entry:
        fields: dict[str, str] = {}
        splits: list[list[str]] = []
        for _, code, value in record:
            if code == "S":
                splits.append([value.strip(), "", ""])
            elif code in "E$" and splits:
                splits[-1][1 if code == "E" else 2] = value.strip()
            elif code == "A":
                fields["A"] = (fields.get("A", "") + " " + value.strip()).strip()
            else:
                fields.setdefault(code, value.strip())
        summary = "; ".join(f"{s[0]} {s[2]}".strip() for s in splits)
        raw = [fields.get(h, "") for h in HEADERS[:-1]] + [summary]
        entry = Entry(line=record[0][0], statement=statement, raw=raw, currency=self.currency)
        if section in INVESTMENT_SECTIONS:
            entry.skipped = True
            entry.errors.append(f"line {entry.line}: {INVESTMENT_NOTE}")
            entry.name = clean_text(fields.get("Y") or fields.get("P") or fields.get("N"))
            return entry
        date_text = fields.get("D", "")
        try:
            entry.date = parse_qif_date(date_text, self.order)
        except ValueProblem as exc:
            entry.problem(
                "D", date_text, str(exc) if date_text else "is missing: a date is required"
            )
        amount_text = fields.get("T", fields.get("U", ""))
        try:
            amount = parse_amount(amount_text, self.number_format)
            entry.amount = (-amount if self.inflows_positive else amount) + Decimal(0)
        except NumberError as exc:
            entry.problem("T", amount_text, f"{exc} ({self.number_format})")
        category, tags, transfer = _category(fields.get("L", ""))
        notes = [clean_text(fields.get("M"), MAX_NOTES)]
        if splits:
            parts = [_category(s[0]) for s in splits]
            names = {p[0] for p in parts}
            category = names.pop() if len(names) == 1 else ""
            tags = list(dict.fromkeys(t for p in parts for t in p[1]))
            notes.append("Splits: " + summary)
        if transfer:
            notes.append(f"Transfer [{transfer}]")
        payee = clean_text(fields.get("P"))
        memo = notes[0]
        number = clean_text(fields.get("N"))
        entry.name = (
            payee or memo[:MAX_NAME] or (f"Check {number}" if number.isdigit() else "")
        ) or (f"Transfer [{transfer}]" if transfer else category or "QIF transaction")
        entry.notes = "\n".join(n for n in notes if n and n != entry.name)
        entry.category = category
        entry.tags = tags
        return entry


def _category(value: str) -> tuple[str, list[str], str]:
    """(category, tags, transfer account) of an `L` or `S` value: `Food:Groceries/Trip` is the
    category `Food:Groceries` with the class `Trip` as a tag; `[Savings]` a transfer."""
    text, _, klass = value.strip().partition("/")
    tags = [clean_text(t) for t in klass.split(":") if t.strip()]
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        return "", tags, clean_text(text[1:-1])
    return clean_text(text), tags, ""
