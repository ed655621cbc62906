"""What a ledger batch derives when it closes, inside its database transaction: the search
index's queue, then balances, then transfer matching, once per household and account; or,
for batches that share a `PairsLater`, the matching once after all of them."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal

from django.db import connection, transaction

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
    match: bool = True,
    only_added: bool = False,
) -> int:
    """Bring everything derived from these accounts' rows up to date, from the earliest changed
    date per account on (None: from the first day). Returns how many transfers were suggested.

    `created`: the whole change was the creation of these transactions (their account loaded):
    transfer matching only looks for the new rows' counterparts. `flows`: the whole change was
    rows added and deleted, these ledger-signed flows per account and day: balances move by
    them in place (`only_added`: no row was deleted). `match=False`: no transfer matching (a
    `PairsLater` does it)."""
    if not account_dates:
        return 0
    search_index_refresh(connection)
    account_balances_refresh(account_dates=account_dates, added=flows, only_added=only_added)
    if not match:
        return 0
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


class PairsLater:
    """Transfer matching for several ledger batches, run once after they have all closed.

    A provider sync writes each account in its own batch (one account failing loses none of
    the others). Matching at every close searched each new account's rows against the whole
    household again: twenty accounts meant twenty searches, each reading the household as
    it had grown. Batches opened with `ledger_batch(pairs_later=...)` derive their balances
    and search entries as usual and record which accounts changed from which day; `match()`
    then pairs all of them in one pass, in its own database transaction (so a pair chooses
    among every account's rows at once, closest dates first)."""

    def __init__(self) -> None:
        self._families: dict[uuid.UUID, Family] = {}
        self._dates: dict[uuid.UUID, dict[uuid.UUID, dt.date | None]] = {}

    def add(self, family: Family, account_dates: Mapping[uuid.UUID, dt.date | None]) -> None:
        """These accounts of `family` changed from these days on (None: from the first)."""
        self._families.setdefault(family.pk, family)
        dates = self._dates.setdefault(family.pk, {})
        for account_id, date in account_dates.items():
            merge_account_dates(dates, account_id, date)

    def match(self) -> int:
        """Pair what the batches changed; returns how many transfers were suggested."""
        paired = 0
        dates_by_family, self._dates = self._dates, {}
        with transaction.atomic():
            for family_id, dates in dates_by_family.items():
                if dates:
                    paired += transfers_match(
                        family=self._families[family_id], account_ids=list(dates), since=dates
                    )
        return paired
