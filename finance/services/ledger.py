"""What runs after any write to the ledger: balances, then transfer matching, once per account."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping

from django.db import connection

from finance.models import Family
from finance.search_sqlite import search_index_refresh
from finance.services.balances import account_balances_refresh


def ledger_changed(*, family: Family, account_dates: Mapping[uuid.UUID, dt.date | None]) -> None:
    """Call once per request (or sync, or import) with the earliest changed date per account."""
    if not account_dates:
        return
    search_index_refresh(connection)
    account_balances_refresh(account_dates=account_dates)
    from finance.services.transfers import transfers_match

    transfers_match(family=family, account_ids=list(account_dates), since=account_dates)


def merge_account_dates(
    target: dict[uuid.UUID, dt.date | None], account_id: uuid.UUID, date: dt.date | None
) -> None:
    """Record that `account_id` changed from `date` on (None: from its first day)."""
    if account_id not in target:
        target[account_id] = date
        return
    current = target[account_id]
    target[account_id] = None if current is None or date is None else min(current, date)
