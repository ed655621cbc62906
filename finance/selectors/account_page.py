"""Reads behind the account's admin page: the balance chart, the provider link and its last
sync, and the latest transactions."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.apps import apps

from finance.labels import connection_health
from finance.models import Account, Transaction
from finance.selectors.dashboard import account_balance_series, family_today

CHART_DAYS = 90
LATEST_TRANSACTIONS = 20


def account_latest_transactions(*, account: Account, limit: int = LATEST_TRANSACTIONS) -> list:
    return list(
        Transaction.objects.filter(account=account)
        .select_related("category", "merchant")
        .order_by("-date", "-created_at", "-id")[:limit]
    )


def account_provider_link(*, account: Account) -> Any:
    """The provider account this ledger account is linked to (with its connection), or None."""
    ProviderAccount = apps.get_model("providers", "ProviderAccount")
    return (
        ProviderAccount.objects.filter(account=account, skipped=False)
        .select_related("connection")
        .first()
    )


def account_last_sync(*, account: Account, link: Any = None) -> Any:
    link = link if link is not None else account_provider_link(account=account)
    if link is None:
        return None
    Sync = apps.get_model("providers", "Sync")
    return Sync.objects.filter(connection_id=link.connection_id).order_by("-created_at").first()


def account_page_context(*, account: Account) -> dict[str, Any]:
    end = family_today(account.family)
    start = end - dt.timedelta(days=CHART_DAYS - 1)
    link = account_provider_link(account=account)
    last_sync = account_last_sync(account=account, link=link)
    health = connection_health(link.connection, last_sync) if link is not None else ("", "")
    return {
        "account": account,
        "health": health[0],
        "health_text": health[1],
        "balance_points": account_balance_series(account=account, start=start, end=end),
        "chart_days": CHART_DAYS,
        "provider_link": link,
        "last_sync": last_sync,
        "latest_transactions": account_latest_transactions(account=account),
    }
