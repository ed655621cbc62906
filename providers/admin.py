"""Household-scoped admin pages: connections (status, errors, provider accounts, recent syncs,
a "Sync now" action) and syncs. The credential is never shown."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from core.errors import ValidationFailed
from finance.admin_base import HouseholdAdmin, HouseholdRelatedFilter, scope_queryset
from finance.labels import connection_health, counted, label_for
from finance.models import Account
from finance.selectors.account_page import account_latest_transactions, account_provider_link
from finance.templatetags.finance_admin import definition_list, money, when
from providers.admin_views import (
    connection_add,
    connection_link,
    connection_page_context,
    connection_reconnect_view,
    connection_sync,
)
from providers.models import ProviderAccount, ProviderConnection, Sync
from providers.services import account_sync_request, sync_request


@admin.action(description="Sync now")
def sync_now(modeladmin: Any, request: HttpRequest, queryset: QuerySet) -> None:
    started = 0
    for connection in queryset:
        _, created = sync_request(connection=connection)
        started += int(created)
    modeladmin.message_user(
        request,
        f"{counted(started, 'sync', 'syncs')} started; already running ones were kept.",
        messages.SUCCESS,
    )


@admin.register(ProviderConnection)
class ProviderConnectionAdmin(HouseholdAdmin):
    list_display = ("__str__", "provider", "status", "last_synced_at")
    list_filter = ("provider", "status")
    fields = ("provider", "name", "status", "error", "last_synced_at", "daily_request_count")
    readonly_fields = ("provider", "status", "error", "last_synced_at", "daily_request_count")
    actions = [sync_now]

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> Any:
        if not self.has_add_permission(request):
            raise PermissionDenied
        return connection_add(self, request)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> Any:
        connection = self.get_object(request, unquote(object_id))
        if connection is not None:
            extra_context = {
                **(extra_context or {}),
                **connection_page_context(connection, request),
            }
        return super().change_view(request, object_id, form_url, extra_context)

    def _own_view(self, view: Any, post_only: bool = True) -> Any:
        def wrapped(request: HttpRequest, object_id: Any) -> Any:
            if not self.has_change_permission(request):
                raise PermissionDenied
            return view(self, request, object_id)

        return self.admin_site.admin_view(require_POST(wrapped) if post_only else wrapped)

    def get_urls(self) -> list:
        sync = self.admin_site.admin_view(require_POST(self.account_sync_view))
        status = self.admin_site.admin_view(self.account_sync_status_view)
        return [
            path(
                "<uuid:object_id>/link/",
                self._own_view(connection_link),
                name="providers_connection_link",
            ),
            path(
                "<uuid:object_id>/sync-now/",
                self._own_view(connection_sync),
                name="providers_connection_sync",
            ),
            path(
                "<uuid:object_id>/reconnect/",
                self._own_view(connection_reconnect_view, post_only=False),
                name="providers_connection_reconnect",
            ),
            path("account/<uuid:account_id>/sync/", sync, name="providers_account_sync"),
            path(
                "account/<uuid:account_id>/sync-status/",
                status,
                name="providers_account_sync_status",
            ),
            *super().get_urls(),
        ]

    def _account(self, request: HttpRequest, account_id: Any) -> Account:
        account = scope_queryset(Account.objects.all(), request).filter(pk=account_id).first()
        if account is None:
            raise Http404
        return account

    def account_sync_view(self, request: HttpRequest, account_id: Any) -> HttpResponse:
        """The account page's "Sync now": syncs the connection the account is linked to.

        Answers JSON to the page's script (Accept: application/json), else redirects back."""
        account = self._account(request, account_id)
        wants_json = "application/json" in request.headers.get("Accept", "")
        if not self.has_change_permission(request) and not request.user.has_perm(
            "finance.change_account"
        ):
            raise PermissionDenied
        try:
            sync = account_sync_request(account=account)
        except ValidationFailed:
            message = "This account is not linked to a provider."
            if wants_json:
                return JsonResponse({"error": "validation_failed", "message": message}, status=422)
            self.message_user(request, message, messages.ERROR)
        else:
            if wants_json:
                return JsonResponse(_sync_json(sync), status=202)
            self.message_user(request, f"Sync {sync.status} for {account}.", messages.SUCCESS)
        target = request.META.get("HTTP_REFERER", "")
        if not url_has_allowed_host_and_scheme(target, {request.get_host()}):
            try:
                target = reverse("admin:finance_account_change", args=[account.pk])
            except NoReverseMatch:
                target = reverse("admin:providers_providerconnection_changelist")
        return HttpResponseRedirect(target)

    def account_sync_status_view(self, request: HttpRequest, account_id: Any) -> JsonResponse:
        """The sync's progress for the account page: status, and once it has finished, the
        account's refreshed balance and latest transactions."""
        account = self._account(request, account_id)
        link = account_provider_link(account=account)
        if link is None:
            raise Http404
        syncs = Sync.objects.filter(connection_id=link.connection_id)
        wanted = request.GET.get("sync", "")
        sync = None
        if wanted:
            try:
                sync = syncs.filter(pk=uuid.UUID(wanted)).first()
            except ValueError:
                sync = None
        sync = sync or syncs.order_by("-created_at").first()
        if sync is None:
            raise Http404
        body = _sync_json(sync)
        if sync.status not in Sync.ACTIVE:
            account.refresh_from_db()
            body["balance_text"] = money(account.balance, account.currency)
            link = account_provider_link(account=account)
            body["health"], body["health_text"] = connection_health(link.connection, sync)
            body["transactions_html"] = render_to_string(
                "admin/finance/account/_latest_transactions.html",
                {"latest_transactions": account_latest_transactions(account=account)},
                request=request,
            )
        return JsonResponse(body)


def _sync_json(sync: Sync) -> dict[str, Any]:
    return {
        "id": str(sync.pk),
        "status": sync.status,
        "status_text": label_for("sync", sync.status),
        "finished_text": when(sync.finished_at) if sync.finished_at else "",
        "started_at": sync.started_at.isoformat() if sync.started_at else None,
        "finished_at": sync.finished_at.isoformat() if sync.finished_at else None,
        "error": sync.error,
        "stats": {k: v for k, v in (sync.stats or {}).items() if isinstance(v, int | float)},
    }


@admin.register(ProviderAccount)
class ProviderAccountAdmin(HouseholdAdmin):
    family_path = "connection__family"
    list_display = ("name", "connection", "currency", "account", "skipped")
    list_select_related = ("connection", "account")
    list_filter = (("connection", HouseholdRelatedFilter), "skipped")
    fields = ("connection", "name", "upstream_id", "currency", "account", "skipped")
    readonly_fields = ("connection", "name", "upstream_id", "currency")
    search_fields = ("name", "upstream_id")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Sync)
class SyncAdmin(HouseholdAdmin):
    family_path = "connection__family"
    list_display = ("started", "connection", "status", "finished_at", "error")
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
        "stats_text",
        "attempt",
    )
    fields = readonly_fields

    @admin.display(description="started", ordering="created_at")
    def started(self, obj: Sync) -> str:
        return when(obj.started_at or obj.created_at)

    @admin.display(description="figures")
    def stats_text(self, obj: Sync) -> str:
        return definition_list(obj.stats)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
