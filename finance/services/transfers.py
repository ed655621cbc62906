"""Transfer matching. (The ledger issue fills this in.)"""

from __future__ import annotations

import uuid

from finance.models import Family


def transfers_match(*, family: Family, account_ids: list[uuid.UUID]) -> int:
    """Pair transactions of these accounts as pending transfers; return how many were paired."""
    return 0
