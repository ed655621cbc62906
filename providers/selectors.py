"""Reads of the providers app, always from one household."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from core.filters import query_param
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


@dataclass(frozen=True)
class SyncFilters:
    connection_id: uuid.UUID | None = query_param("uuid", description="uuid")
    status: str | None = query_param("choice", choices=Sync.Status.values)


def sync_list(*, family: Family, filters: SyncFilters) -> QuerySet[Sync]:
    qs = sync_queryset(family=family)
    if filters.connection_id:
        qs = qs.filter(connection_id=filters.connection_id)
    if filters.status:
        qs = qs.filter(status=filters.status)
    return qs.order_by("-created_at", "-id")
