"""MT940 (SWIFT customer statement): `:20:` starts a statement, `:25:` names the account,
`:60F:`/`:60M:` and `:62F:`/`:62M:` are the opening and closing balances, each `:61:` line is
an entry and the `:86:` after it its details (German `?20` subfields and Dutch `/NAME/` tags
are read; other banks' text is kept as it is). Optional SWIFT blocks (`{1:...}{4:` ... `-}`)
are skipped.

Read line by line (one statement at a time): a library that parses the whole text at once
would hold every entry of a large file, and could not say on which line a problem is.

Signs: `D` (debit) and `RC` (reversal of a credit) are money out, positive in the ledger;
`C` and `RD` money in, negative. The booking date is the `:61:` entry date (MMDD, its year
taken from the value date, across a year end) or else the value date."""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import BinaryIO

from imports.parsing.csvfile import detect_encoding
from imports.parsing.statements import (
    MAX_ID,
    MAX_NAME,
    MAX_NOTES,
    Entry,
    FormatError,
    Statement,
    StatementFile,
    ValueProblem,
    checked_date,
    clean_text,
    plain_decimal,
)

HEADERS = [":61:", ":86:"]
_FIELD = re.compile(r"^:(\d{2}[A-Z]?):(.*)$")
_LINE = re.compile(
    r"^(?P<value>\d{6})(?P<entry>\d{4})?(?P<mark>RC|RD|EC|ED|C|D)(?P<funds>[A-Z])?"
    r"(?P<amount>\d[\d,]*)(?P<type>[NSF][A-Z0-9]{3})(?P<ref>.*)$"
)
_BALANCE = re.compile(r"^(?P<mark>[CD])(?P<date>\d{6})(?P<currency>[A-Z]{3})(?P<amount>\d[\d,]*)$")
_BLOCKS = re.compile(r"^(\{[1-35]:[^}]*\})*(\{4:)?")
_GERMAN = re.compile(r"\?(\d{2})")
_DUTCH_KEYS = ("NAME", "REMI", "EREF", "IBAN", "TRTP", "BIC", "ORDP", "BENM", "CSID", "MARF")
PREAMBLE_LINES = 20


def _yymmdd(text: str) -> dt.date:
    year = int(text[:2])
    try:
        return dt.date(2000 + year if year < 70 else 1900 + year, int(text[2:4]), int(text[4:6]))
    except ValueError:
        raise ValueProblem("is not a real date (YYMMDD)") from None


def _amount(text: str) -> Decimal:
    if text.count(",") > 1:
        raise ValueProblem("has more than one decimal comma")
    return plain_decimal(text.rstrip(",") if text.endswith(",") else text, comma=True)


def read_mt940(stream: BinaryIO, *, default_currency: str) -> StatementFile:
    encoding = detect_encoding(stream)
    stream.seek(0)
    text = io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline=None)
    return StatementFile(headers=list(HEADERS), encoding=encoding, items=_read(text))


def _fields(text: io.TextIOBase) -> Iterator[tuple[str, str, int]]:
    """(tag, value, line) per field, continuation lines joined; "-" for a message end."""
    tag, parts, start = "", [], 0
    started = False
    for number, line in enumerate(text, start=1):
        line = line.rstrip("\r\n")
        if line.startswith("{"):
            line = _BLOCKS.sub("", line, count=1)
        if line.strip() in ("-", "-}") or line.startswith("-}"):
            if tag:
                yield tag, "\n".join(parts), start
                tag = ""
            yield "-", "", number
            continue
        match = _FIELD.match(line)
        if match is None:
            if tag:
                parts.append(line)
            elif started and line.strip():
                raise FormatError(number, f"text outside a field: {line[:40]!r}")
            elif not started and number > PREAMBLE_LINES:
                break
            continue
        if tag:
            yield tag, "\n".join(parts), start
        tag, parts, start = match[1], [match[2]], number
        started = True
    if tag:
        yield tag, "\n".join(parts), start
    if not started:
        raise FormatError(1, "not an MT940 file: no :20: field near the start")


def _read(text: io.TextIOBase) -> Iterator[Entry | Statement]:
    statement: Statement | None = None
    pending: Entry | None = None
    count = 0
    closed = True
    seen_first = False
    for tag, value, line in _fields(text):
        if not seen_first:
            if tag != "20":
                raise FormatError(line, f"not an MT940 file: :{tag}: before the first :20:")
            seen_first = True
        if pending is not None and tag != "86":
            yield pending
            pending = None
        if tag == "20":
            if statement is not None:
                if not closed:
                    raise FormatError(line, f"the statement at line {statement.line} has no :62:")
                yield statement
            count += 1
            statement = Statement(number=count, line=line, kind="bank", reference=value.strip())
            closed = False
        elif statement is None or tag == "-":
            continue
        elif tag == "25":
            statement.account = clean_text(value.replace("\n", ""))
        elif tag == "28C":
            statement.reference = f"{statement.reference} {value.strip()}".strip()
        elif tag in ("60F", "60M"):
            statement.opening_balance, statement.opening_date, statement.currency = _balance(
                value, line, tag
            )
        elif tag in ("62F", "62M"):
            statement.closing_balance, statement.closing_date, _ = _balance(value, line, tag)
            statement.last_line = line
            closed = True
        elif tag == "61":
            if not statement.account or statement.opening_balance is None:
                raise FormatError(line, "a :61: line before the statement's :25: and :60F:")
            statement.entries += 1
            pending = _entry(value, line, statement)
        elif tag == "86" and pending is not None:
            _details(pending, value)
            yield pending
            pending = None
    if pending is not None:
        yield pending
    if statement is None:
        raise FormatError(1, "not an MT940 file: no statement")
    if not closed:
        raise FormatError(
            statement.line,
            "the file ends before this statement's closing balance :62F:: truncated?",
        )
    yield statement


def _balance(value: str, line: int, tag: str) -> tuple[Decimal, dt.date, str]:
    match = _BALANCE.match(value.strip())
    if match is None:
        raise FormatError(
            line, f":{tag}: {value.strip()[:40]!r} is not a balance (C/D, YYMMDD, ccy)"
        )
    try:
        amount = _amount(match["amount"])
        day = checked_date(_yymmdd(match["date"]))
    except ValueProblem as exc:
        raise FormatError(line, f":{tag}: {value.strip()[:40]!r} {exc}") from None
    return (-amount if match["mark"] == "D" else amount), day, match["currency"]


def _entry(value: str, line: int, statement: Statement) -> Entry:
    first, _, extra = value.partition("\n")
    entry = Entry(line=line, statement=statement, raw=[value, ""], currency=statement.currency)
    match = _LINE.match(first.strip())
    if match is None:
        entry.problem(":61:", first.strip(), "is not a statement line (date, C/D, amount, type)")
        entry.name = "MT940 entry"
        return entry
    try:
        value_date = _yymmdd(match["value"])
        booked = value_date
        if match["entry"]:
            month, day = int(match["entry"][:2]), int(match["entry"][2:])
            year = value_date.year
            if month == 12 and value_date.month == 1:
                year -= 1
            elif month == 1 and value_date.month == 12:
                year += 1
            try:
                booked = dt.date(year, month, day)
            except ValueError:
                raise ValueProblem("has an entry date that is not a real date (MMDD)") from None
        entry.date = checked_date(booked)
    except ValueProblem as exc:
        entry.problem(":61: date", first[:10], str(exc))
    try:
        amount = _amount(match["amount"])
        out = match["mark"] in ("D", "RC", "ED")
        entry.amount = (amount if out else -amount) + Decimal(0)
    except ValueProblem as exc:
        entry.problem(":61: amount", match["amount"], str(exc))
    reference, _, bank_ref = match["ref"].partition("//")
    bank_ref = clean_text(bank_ref, MAX_ID)
    if bank_ref and bank_ref.upper() != "NONREF" and entry.date and entry.amount is not None:
        # A bank reference alone is not unique at every bank: with the date and amount it is.
        entry.upstream_id = f"{bank_ref}:{entry.date.isoformat()}:{entry.amount:f}"[:MAX_ID]
    entry.name = clean_text(extra) or clean_text(reference if reference != "NONREF" else "")
    if not entry.name:
        entry.name = "Debit" if match["mark"] in ("D", "RC", "ED") else "Credit"
    return entry


def _details(entry: Entry, value: str) -> None:
    entry.raw[1] = value
    joined = value.replace("\n", "")
    name, notes = "", ""
    if re.match(r"^\d{3}\?\d{2}", joined):  # German structured details (DFÜ)
        fields: dict[str, str] = {}
        pieces = _GERMAN.split(joined[3:])
        for key, text in zip(pieces[1::2], pieces[2::2], strict=False):
            fields[key] = fields.get(key, "") + text
        name = (fields.get("32", "") + fields.get("33", "")).strip()
        purpose = "".join(fields.get(str(k), "") for k in (*range(20, 30), *range(60, 64)))
        if "SVWZ+" in purpose:
            purpose = purpose.split("SVWZ+", 1)[1]
        notes = purpose.strip() or fields.get("00", "")
        name = name or fields.get("00", "").strip()
    elif joined.startswith("/") and any(f"/{key}/" in joined for key in _DUTCH_KEYS):
        tags = re.split(r"/(" + "|".join(_DUTCH_KEYS) + r")/", joined)
        values = dict(zip(tags[1::2], tags[2::2], strict=False))
        name = values.get("NAME", "").strip("/ ")
        notes = values.get("REMI", "").removeprefix("USTD//").strip("/ ")
    else:
        lines = [part.strip() for part in value.split("\n") if part.strip()]
        name = lines[0] if lines else ""
        notes = " ".join(lines[1:])
    entry.name = clean_text(name, MAX_NAME) or entry.name
    entry.notes = clean_text(notes, MAX_NOTES)
