"""Template helpers for the account page's "Sync now" button."""

from __future__ import annotations

from typing import Any

from django import template

from providers.models import ProviderAccount, Sync

register = template.Library()


@register.simple_tag
def account_provider_link(account: Any) -> ProviderAccount | None:
    if account is None or getattr(account, "pk", None) is None:
        return None
    return (
        ProviderAccount.objects.filter(account=account, skipped=False)
        .select_related("connection")
        .first()
    )


@register.simple_tag
def account_last_sync(provider_account: ProviderAccount | None) -> Sync | None:
    if provider_account is None:
        return None
    return Sync.objects.filter(connection_id=provider_account.connection_id).first()
