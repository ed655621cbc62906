"""The ECB's eurofxref XML files, read safely and as a stream.

    <gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01"
                     xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
      <gesmes:subject>Reference rates</gesmes:subject>
      <Cube>
        <Cube time="2024-05-17">
          <Cube currency="USD" rate="1.0866"/> ...

Each dated Cube is one day: 1 EUR = `rate` units of `currency`. The history file holds every
working day since 1999 (about 7,000 days), so days are yielded as they are read and each is
cleared after it (`iterparse`), never held as one tree. DTDs, entities and external references
are refused (defusedxml)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import IO
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from core.bounds import date_problem
from finance.currencies import is_currency
from finance.fx.bounds import rate_parse
from providers.types import ProviderError

LABEL = "The European Central Bank"
MAX_NOTES = 20


@dataclass(frozen=True)
class EcbDay:
    date: dt.date
    rates: dict[str, Decimal]  # currency -> units of it for 1 EUR


@dataclass
class ParseNotes:
    """What was left out of a file, and why (the first few reasons)."""

    skipped: int = 0
    reasons: list[str] = field(default_factory=list)

    def skip(self, reason: str) -> None:
        self.skipped += 1
        if len(self.reasons) < MAX_NOTES:
            self.reasons.append(reason)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _day(elem: object, notes: ParseNotes, today: dt.date) -> EcbDay | None:
    raw_time = elem.get("time", "")  # type: ignore[attr-defined]
    try:
        day = dt.date.fromisoformat(raw_time)
    except ValueError:
        notes.skip(f"a day with an unreadable time {raw_time[:20]!r}")
        return None
    if date_problem(day, today):
        notes.skip(f"{raw_time}: outside the dates rates may have")
        return None
    rates: dict[str, Decimal] = {}
    for child in elem:  # type: ignore[attr-defined]
        if _local(child.tag) != "Cube":
            continue
        currency = (child.get("currency") or "").strip().upper()
        rate = rate_parse(child.get("rate"))
        if not is_currency(currency) or currency == "EUR":
            notes.skip(f"{raw_time}: currency {currency[:10]!r} is not an ISO 4217 code")
        elif rate is None:
            notes.skip(f"{raw_time} {currency}: rate {(child.get('rate') or '')[:20]!r} unreadable")
        else:
            rates[currency] = rate
    return EcbDay(day, rates)


def ecb_days(
    source: IO[bytes], *, notes: ParseNotes | None = None, today: dt.date | None = None
) -> Iterator[EcbDay]:
    """The days of an eurofxref file, in file order (the history files are newest first).

    Raises ProviderError when the file is not such a file (not XML, forbidden constructs,
    no dated Cube at all)."""
    notes = notes if notes is not None else ParseNotes()
    today = today or dt.date.today()
    found = False
    root_checked = False
    try:
        for event, elem in iterparse(source, events=("start", "end"), forbid_dtd=True):
            if event == "start":
                if not root_checked:
                    root_checked = True
                    if _local(elem.tag) != "Envelope":
                        raise _format_error(f"its root element is <{_local(elem.tag)[:40]}>")
                continue
            if _local(elem.tag) != "Cube" or elem.get("time") is None:
                continue
            day = _day(elem, notes, today)
            elem.clear()  # the day's rates are read: free them before the next day
            if day is not None:
                found = True
                yield day
    except (ParseError, DefusedXmlException) as exc:
        raise _format_error(f"it is not valid or safe XML ({type(exc).__name__})") from None
    if not found:
        raise _format_error("it holds no dated rates")


def _format_error(why: str) -> ProviderError:
    return ProviderError(f"{LABEL} sent a rates file that cannot be read: {why}.")
