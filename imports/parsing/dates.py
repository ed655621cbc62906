"""Dates in the formats banks export, strictly: `2024-13-01` or `01/02` is an error, not a guess."""

from __future__ import annotations

import datetime as dt
import functools
import re

from core.bounds import date_problem

DATE_FORMATS = (
    "%Y-%m-%d",
    "%m/%d/%Y",
    "%d/%m/%Y",
    "%d.%m.%Y",
    "%d-%m-%Y",
    "%Y/%m/%d",
    "%Y%m%d",
    "%d/%m/%y",
    "%m/%d/%y",
    "%d %b %Y",
    "%d.%m.%y",
)
DEFAULT_DATE_FORMAT = "%Y-%m-%d"

# Each directive as a regex: with separators a day or month may have one digit (1/5/2024),
# without them (%Y%m%d) every field has its full width.
_LOOSE = {"%Y": r"\d{4}", "%m": r"\d{1,2}", "%d": r"\d{1,2}", "%y": r"\d{2}", "%b": r"[A-Za-z]{3}"}
_FIXED = {"%Y": r"\d{4}", "%m": r"\d{2}", "%d": r"\d{2}", "%y": r"\d{2}", "%b": r"[A-Za-z]{3}"}
_MONTHS = {
    name: number
    for number, name in enumerate(
        "jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1
    )
}


class DateError(ValueError):
    pass


def _compile(fmt: str) -> re.Pattern[str]:
    table = _FIXED if fmt == "%Y%m%d" else _LOOSE
    pattern, i = "", 0
    while i < len(fmt):
        if fmt[i] == "%":
            directive = fmt[i : i + 2]
            pattern += f"(?P<{directive[1]}>{table[directive]})"
            i += 2
        else:
            pattern += r"\s+" if fmt[i] == " " else re.escape(fmt[i])
            i += 1
    return re.compile(f"^{pattern}$")


_PATTERNS = {fmt: _compile(fmt) for fmt in DATE_FORMATS}


def parse_date(raw: str, date_format: str, today: dt.date | None = None) -> dt.date:
    """The date `raw` means in `date_format` (English month abbreviations for %b), checked
    against the bounds on `today` (default: the server's)."""
    return _parse_date(raw, date_format, today or dt.date.today())


# A file's dates repeat (a few thousand days in a million rows): each text is read once a day.
# Errors are not cached (lru_cache keeps no exceptions), so a bad date is read again each time.
@functools.lru_cache(maxsize=8192)
def _parse_date(raw: str, date_format: str, today: dt.date) -> dt.date:
    match = _PATTERNS[date_format].match(raw.strip())
    if match is None:
        raise DateError(f"does not match the date format {date_format}")
    parts = match.groupdict()
    if "Y" in parts:
        year = int(parts["Y"])
    else:
        short = int(parts["y"])
        year = 2000 + short if short < 70 else 1900 + short  # as strptime's %y, pivot 1969
    if "b" in parts:
        month = _MONTHS.get(parts["b"].lower())
        if month is None:
            raise DateError(f"has an unknown month {parts['b']!r}")
    else:
        month = int(parts["m"])
    try:
        value = dt.date(year, month, int(parts["d"]))
    except ValueError as exc:
        raise DateError(f"is not a real date ({exc})") from None
    problem = date_problem(value, today)
    if problem:
        raise DateError(problem)
    return value
