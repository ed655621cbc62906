"""The "Export my data" page: the household's exports with their downloads, and a button that
starts one. Staff (superusers) see every household's exports and may export any household.
Restores are listed read-only (they are made through the API or the shell)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from exports.models import Export, Restore
from exports.services import export_create, export_download, export_path
from finance.admin_base import HouseholdAdmin, is_staff_operator, user_family
from finance.models import Family


@admin.register(Export)
class ExportAdmin(HouseholdAdmin):
    list_display = ("created_at", "status", "records", "size", "completed_at", "download")
    list_filter = ("status",)
    fields = ("status", "counts", "size_bytes", "error", "created_at", "completed_at")
    readonly_fields = fields

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        extra_context = {"title": "Export my data", **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    @admin.display(description="records")
    def records(self, export: Export) -> str:
        return ", ".join(f"{n} {kind}" for kind, n in (export.counts or {}).items() if n) or "-"

    @admin.display(description="size")
    def size(self, export: Export) -> str:
        return "-" if export.size_bytes is None else f"{export.size_bytes / 1024:,.1f} KiB"

    @admin.display(description="archive")
    def download(self, export: Export) -> str:
        if export_path(export) is None:
            return "-"
        url = reverse("admin:exports_export_download", args=[export.pk])
        return format_html('<a href="{}" class="export-download">Download</a>', url)

    def get_urls(self) -> list:
        download = self.admin_site.admin_view(self.download_view)
        return [
            path("<path:object_id>/download/", download, name="exports_export_download"),
            *super().get_urls(),
        ]

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> Any:
        """ "Export now": the household's own export (staff pick the household)."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        staff = is_staff_operator(request)
        if request.method == "POST":
            family = (
                Family.objects.filter(pk=request.POST.get("family")).first()
                if staff
                else user_family(request)
            )
            if family is None:
                raise PermissionDenied
            export_create(family=family, requested_by=request.user)
            self.message_user(
                request,
                f"The export of {family} has started; its download appears here when complete.",
                messages.SUCCESS,
            )
            return HttpResponseRedirect(reverse("admin:exports_export_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "title": "Start an export",
            "opts": self.model._meta,
            "families": Family.objects.order_by("name") if staff else None,
            "retention_hours": settings.EXPORT_RETENTION_HOURS,
        }
        return TemplateResponse(request, "admin/exports/export/start.html", context)

    def download_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        export = self.get_object(request, unquote(object_id))
        response = None if export is None else export_download(export)
        if response is None:
            raise Http404("No such archive.")
        return response


@admin.register(Restore)
class RestoreAdmin(HouseholdAdmin):
    list_display = ("created_at", "status", "size_bytes", "completed_at", "error")
    list_filter = ("status",)
    fields = ("status", "counts", "readback", "error", "size_bytes", "created_at", "completed_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
