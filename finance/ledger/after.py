"""What a ledger batch derives when it closes, inside its database transaction: the search
index's queue, then balances, then transfer matching, once per household and account."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal

from django.db import connection

from finance.ledger.balances import ZERO, account_balances_refresh
from finance.ledger.db.search_sqlite import search_index_refresh
from finance.ledger.transfer_matching import transfers_match
from finance.models import Family, Transaction


def derive(
    *,
    family: Family,
    account_dates: Mapping[uuid.UUID, dt.date | None],
    created: Sequence[Transaction] | None = None,
) -> int:
    """Bring everything derived from these accounts' rows up to date, from the earliest changed
    date per account on (None: from the first day). Returns how many transfers were suggested.

    `created`: the whole change was the creation of these transactions (their account loaded):
    balances then move by the new flows in place, and transfer matching only looks for the new
    rows' counterparts."""
    if not account_dates:
        return 0
    search_index_refresh(connection)
    added: dict[uuid.UUID, dict[dt.date, Decimal]] | None = None
    if created is not None:
        added = {}
        for txn in created:
            if not txn.excluded:
                days = added.setdefault(txn.account_id, {})
                days[txn.date] = days.get(txn.date, ZERO) + txn.amount
    account_balances_refresh(account_dates=account_dates, added=added)
    return transfers_match(
        family=family, account_ids=list(account_dates), since=account_dates, new=created
    )


def merge_account_dates(
    target: dict[uuid.UUID, dt.date | None], account_id: uuid.UUID, date: dt.date | None
) -> None:
    """Record that `account_id` changed from `date` on (None: from its first day)."""
    if account_id not in target:
        target[account_id] = date
        return
    current = target[account_id]
    target[account_id] = None if current is None or date is None else min(current, date)
