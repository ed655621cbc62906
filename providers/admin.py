"""Household-scoped admin pages: connections (status, errors, provider accounts, recent syncs,
a "Sync now" action) and syncs. The credential is never shown."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from finance.admin_base import HouseholdAdmin, HouseholdRelatedFilter, scope_queryset
from providers.models import ProviderAccount, ProviderConnection, Sync
from providers.services import sync_request


class ProviderAccountInline(admin.TabularInline):
    model = ProviderAccount
    extra = 0
    can_delete = False
    fields = ("name", "upstream_id", "currency", "institution_name", "account", "skipped")
    readonly_fields = ("name", "upstream_id", "currency", "institution_name")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and hasattr(field, "queryset"):
            field.queryset = scope_queryset(field.queryset, request)
        return field


class SyncInline(admin.TabularInline):
    model = Sync
    extra = 0
    can_delete = False
    max_num = 0
    fields = ("status", "started_at", "finished_at", "error", "stats")
    readonly_fields = fields
    ordering = ("-created_at",)


@admin.action(description="Sync now")
def sync_now(modeladmin: Any, request: HttpRequest, queryset: QuerySet) -> None:
    started = 0
    for connection in queryset:
        _, created = sync_request(connection=connection)
        started += int(created)
    modeladmin.message_user(
        request, f"{started} sync(s) started; already running ones were kept.", messages.SUCCESS
    )


@admin.register(ProviderConnection)
class ProviderConnectionAdmin(HouseholdAdmin):
    list_display = ("__str__", "provider", "status", "error", "last_synced_at", "created_at")
    list_filter = ("provider", "status")
    fields = ("provider", "name", "status", "error", "last_synced_at", "daily_request_count")
    readonly_fields = ("provider", "status", "error", "last_synced_at", "daily_request_count")
    inlines = [ProviderAccountInline, SyncInline]
    actions = [sync_now]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # connecting checks the credential with the provider: use the API


@admin.register(ProviderAccount)
class ProviderAccountAdmin(HouseholdAdmin):
    family_path = "connection__family"
    list_display = ("name", "connection", "upstream_id", "currency", "account", "skipped")
    list_filter = (("connection", HouseholdRelatedFilter), "skipped")
    fields = ("connection", "name", "upstream_id", "currency", "account", "skipped")
    readonly_fields = ("connection", "name", "upstream_id", "currency")
    search_fields = ("name", "upstream_id")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Sync)
class SyncAdmin(HouseholdAdmin):
    family_path = "connection__family"
    list_display = ("id", "connection", "status", "started_at", "finished_at", "error")
    list_filter = ("status", ("connection", HouseholdRelatedFilter))
    readonly_fields = (
        "connection",
        "provider_account",
        "status",
        "window_start",
        "window_end",
        "started_at",
        "finished_at",
        "error",
        "stats",
        "attempt",
    )
    fields = readonly_fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
