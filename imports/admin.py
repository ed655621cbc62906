"""The household's admin for imports: status, stats and verification; rows with their errors;
publish and revert actions."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from finance.admin_base import HouseholdAdmin
from finance.api.errors import ApiError
from imports.models import Import, ImportMapping, ImportRow
from imports.services.publish import import_publish
from imports.services.revert import import_revert


class ImportMappingInline(admin.TabularInline):
    model = ImportMapping
    extra = 0
    can_delete = False
    fields = ("kind", "value", "target_id", "create_new", "created_id", "rows_count")
    readonly_fields = ("kind", "value", "created_id", "rows_count")
    show_change_link = False


@admin.register(Import)
class ImportAdmin(HouseholdAdmin):
    list_display = (
        "__str__",
        "status",
        "account",
        "rows",
        "invalid_rows",
        "duplicates",
        "readback",
        "created_at",
    )
    list_filter = ("status", "type")
    search_fields = ("original_filename", "id")
    readonly_fields = (
        "type",
        "status",
        "file",
        "original_filename",
        "file_size",
        "encoding",
        "headers",
        "stats",
        "verification",
        "error",
        "rows_processed",
        "published_at",
        "reverted_at",
        "created_at",
        "updated_at",
    )
    fields = ("account", "configuration", *readonly_fields)
    inlines = [ImportMappingInline]
    actions = ["publish_selected", "revert_selected"]

    @admin.display(description="rows")
    def rows(self, obj: Import) -> int:
        return (obj.stats or {}).get("rows_count", 0)

    @admin.display(description="invalid")
    def invalid_rows(self, obj: Import) -> int:
        return (obj.stats or {}).get("invalid_rows_count", 0)

    @admin.display(description="duplicates")
    def duplicates(self, obj: Import) -> int:
        return (obj.stats or {}).get("duplicates_count", 0)

    @admin.display(description="verification")
    def readback(self, obj: Import) -> str:
        return ((obj.verification or {}).get("readback") or {}).get("status", "not_verified")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # uploads go through the API or `manage.py import_csv`

    def _run(self, request: HttpRequest, queryset: QuerySet, service: Any, verb: str) -> None:
        for imp in queryset:
            try:
                service(data_import=imp)
                self.message_user(request, f"{imp}: {verb} started.", messages.SUCCESS)
            except ApiError as exc:
                self.message_user(request, f"{imp}: {exc.message}", messages.ERROR)

    @admin.action(description="Publish selected imports")
    def publish_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._run(request, queryset, import_publish, "publish")

    @admin.action(description="Revert selected imports")
    def revert_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._run(request, queryset, import_revert, "revert")


@admin.register(ImportRow)
class ImportRowAdmin(HouseholdAdmin):
    family_path = "data_import__family"
    list_display = ("data_import", "row_number", "valid", "duplicate", "name", "amount", "errors")
    list_filter = ("valid", "duplicate", "skipped")
    list_select_related = ("data_import",)
    search_fields = ("name",)
    readonly_fields = [f.name for f in ImportRow._meta.fields]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request)
        import_id = request.GET.get("data_import__id__exact")
        return qs.filter(data_import_id=import_id) if import_id else qs

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
