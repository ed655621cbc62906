"""Reads of the providers app, always from one household."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet

from core.filters import QueryFilters
from finance.models import Family
from providers.models import ProviderAccount, ProviderConnection, Sync


def connection_queryset(*, family: Family) -> QuerySet[ProviderConnection]:
    return ProviderConnection.objects.filter(family=family).prefetch_related(
        Prefetch("accounts", queryset=ProviderAccount.objects.order_by("name", "id"))
    )


def provider_account_queryset(*, family: Family) -> QuerySet[ProviderAccount]:
    return ProviderAccount.objects.filter(connection__family=family).select_related("connection")


def sync_queryset(*, family: Family) -> QuerySet[Sync]:
    return Sync.objects.filter(connection__family=family)


def sync_list(*, family: Family, params: Any) -> QuerySet[Sync]:
    filters = QueryFilters(params)
    connection_id = filters.uuid("connection_id")
    status = filters.choice("status", Sync.Status.values)
    filters.check()
    qs = sync_queryset(family=family)
    if connection_id:
        qs = qs.filter(connection_id=connection_id)
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("-created_at", "-id")
