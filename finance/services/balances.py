"""Account balances. (The ledger issue replaces this with the daily series.)"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from decimal import Decimal

from django.db.models import Sum

from finance.models import Account, Transaction


def account_balances_refresh(*, account_dates: Mapping[uuid.UUID, dt.date | None]) -> None:
    """Bring each account's balance up to date after its transactions changed from a date on."""
    for account in Account.objects.filter(pk__in=list(account_dates)):
        if account.reported_balance is not None:
            continue  # a provider's reported balance wins
        total = Transaction.objects.filter(account=account, excluded=False).aggregate(
            total=Sum("amount")
        )["total"] or Decimal(0)
        balance = total if account.classification == "liability" else -total
        Account.objects.filter(pk=account.pk).update(balance=balance)
