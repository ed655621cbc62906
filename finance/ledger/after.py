"""What a ledger batch derives when it closes, inside its database transaction: the search
index's queue, then balances, then transfer matching, once per household and account."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal

from django.db import connection

from finance.ledger.balances import account_balances_refresh
from finance.ledger.db.search_sqlite import search_index_refresh
from finance.ledger.transfer_matching import transfers_match
from finance.models import Family, Transaction


def derive(
    *,
    family: Family,
    account_dates: Mapping[uuid.UUID, dt.date | None],
    created: Sequence[Transaction] | None = None,
    flows: Mapping[uuid.UUID, Mapping[dt.date, Decimal]] | None = None,
) -> int:
    """Bring everything derived from these accounts' rows up to date, from the earliest changed
    date per account on (None: from the first day). Returns how many transfers were suggested.

    `created`: the whole change was the creation of these transactions (their account loaded):
    transfer matching only looks for the new rows' counterparts. `flows`: the whole change was
    rows added and deleted, these ledger-signed flows per account and day: balances move by
    them in place."""
    if not account_dates:
        return 0
    search_index_refresh(connection)
    account_balances_refresh(account_dates=account_dates, added=flows)
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
