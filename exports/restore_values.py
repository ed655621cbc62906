"""Archived values as stored values: days, instants, decimals, references."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any


def day(text: str | None) -> dt.date | None:
    return None if text is None else dt.date.fromisoformat(text)


def instant(text: str | None) -> dt.datetime | None:
    return None if text is None else dt.datetime.fromisoformat(text)


def dec(text: Any) -> Decimal | None:
    return None if text is None else Decimal(str(text))


def ref(record: dict[str, Any] | None) -> str | None:
    return None if record is None else record["id"]
