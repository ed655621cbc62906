"""Strict input formats shared by the API and the domain."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_strict_date(value: Any) -> dt.date:
    """`YYYY-MM-DD` only. Raises ValueError with a message fit for a user."""
    if not isinstance(value, str) or not _DATE_RE.match(value):
        raise ValueError("must be a date in YYYY-MM-DD format")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError("is not a valid calendar date") from None
