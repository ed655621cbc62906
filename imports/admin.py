"""The household's admin for imports: status, stats and verification; rows with their errors;
publish and revert actions."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest
from django.shortcuts import redirect
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from core.errors import ApplicationError
from finance.admin_base import HouseholdAdmin
from finance.labels import NONE, label_for
from finance.templatetags.finance_admin import definition_list, flow_amount
from imports.admin_views import (
    import_configure_save,
    import_mappings_save,
    import_publish_view,
    import_revert_view,
    import_skip_invalid,
    import_status,
    import_upload,
    review_context,
)
from imports.models import Import, ImportRow
from imports.services.lending import import_delete
from imports.services.publish import import_publish
from imports.services.revert import import_revert


@admin.register(Import)
class ImportAdmin(HouseholdAdmin):
    list_display = (
        "file_name",
        "status_text",
        "account",
        "rows",
        "invalid_rows",
        "duplicates",
        "readback",
        "created_at",
    )
    list_filter = ("status", "type")
    search_fields = ("original_filename", "id")
    fields = (
        "account",
        "status_text",
        "original_filename",
        "file_size",
        "encoding",
        "columns",
        "settings",
        "error",
        "published_at",
        "reverted_at",
        "created_at",
    )
    readonly_fields = fields  # every change goes through the wizard's services
    # The account is nullable, so the admin's own select_related() would skip it (a query a row).
    list_select_related = ("account",)
    actions = ["publish_selected", "revert_selected"]

    @admin.display(description="file", ordering="original_filename")
    def file_name(self, obj: Import) -> str:
        return str(obj)  # the file's name (Import.__str__), sortable

    @admin.display(description="status", ordering="status")
    def status_text(self, obj: Import) -> str:
        return label_for("import", obj.status)

    @admin.display(description="columns in the file")
    def columns(self, obj: Import) -> str:
        return ", ".join(str(h) for h in obj.headers or []) or NONE

    @admin.display(description="how the file is read")
    def settings(self, obj: Import) -> str:
        return definition_list(obj.configuration)

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
        status = ((obj.verification or {}).get("readback") or {}).get("status")
        return label_for("readback", status)

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> Any:
        if not self.has_add_permission(request):
            raise PermissionDenied
        return import_upload(self, request)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> Any:
        imp = self.get_object(request, unquote(object_id))
        if imp is not None:
            extra_context = {**(extra_context or {}), **review_context(imp, request)}
        return super().change_view(request, object_id, form_url, extra_context)

    def _own_view(self, view: Any, post_only: bool = True) -> Any:
        def wrapped(request: HttpRequest, object_id: Any) -> Any:
            allowed = self.has_change_permission if post_only else self.has_view_permission
            if not allowed(request):
                raise PermissionDenied
            return view(self, request, object_id)

        return self.admin_site.admin_view(require_POST(wrapped) if post_only else wrapped)

    def get_urls(self) -> list:
        own = [
            ("mappings", import_mappings_save, True),
            ("configure", import_configure_save, True),
            ("skip-invalid", import_skip_invalid, True),
            ("publish", import_publish_view, True),
            ("revert", import_revert_view, True),
            ("status", import_status, False),
        ]
        routes = [
            path(
                f"<uuid:object_id>/{name}/",
                self._own_view(view, post_only),
                name=f"imports_import_{name.replace('-', '_')}",
            )
            for name, view, post_only in own
        ]
        return [*routes, *super().get_urls()]

    def _run(self, request: HttpRequest, queryset: QuerySet, service: Any, verb: str) -> None:
        for imp in queryset:
            try:
                service(data_import=imp)
                self.message_user(request, f"{imp}: {verb} started.", messages.SUCCESS)
            except ApplicationError as exc:
                self.message_user(request, f"{imp}: {exc.message}", messages.ERROR)

    def delete_model(self, request: HttpRequest, obj: Import) -> None:
        import_delete(data_import=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for imp in queryset:
            import_delete(data_import=imp)

    @admin.action(description="Publish selected imports")
    def publish_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._run(request, queryset, import_publish, "publish")

    @admin.action(description="Revert selected imports")
    def revert_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._run(request, queryset, import_revert, "revert")


@admin.register(ImportRow)
class ImportRowAdmin(HouseholdAdmin):
    family_path = "data_import__family"
    list_display = (
        "data_import",
        "row_number",
        "valid",
        "duplicate",
        "name",
        "amount_text",
        "problems",
    )
    list_filter = ("valid", "duplicate", "skipped")
    list_select_related = ("data_import__account", "data_import__family")
    search_fields = ("name",)
    readonly_fields = [f.name for f in ImportRow._meta.fields]

    @admin.display(description="amount", ordering="amount")
    def amount_text(self, obj: ImportRow) -> str:
        imp = obj.data_import
        currency = imp.account.currency if imp.account_id else imp.family.currency
        return flow_amount(obj.amount, currency) if obj.amount is not None else NONE

    @admin.display(description="errors")
    def problems(self, obj: ImportRow) -> str:
        return "; ".join(str(e) for e in obj.errors or []) or NONE

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request)
        import_id = _import_id(request)
        if "data_import__id__exact" in request.GET and import_id is None:
            return qs.none()  # not an import's id: no rows, as for an unknown one
        return qs.filter(data_import_id=import_id) if import_id else qs

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        """One import's rows, when that import borrows an earlier one's (it holds none of its
        own: imports/services/reuse.py), are listed on its own page, which shows them."""
        import_id = _import_id(request)
        if import_id is not None:
            imports = self.admin_site._registry[Import].get_queryset(request)
            if imports.filter(pk=import_id, rows_from__isnull=False).exists():
                return redirect(reverse("admin:imports_import_change", args=[import_id]))
        return super().changelist_view(request, extra_context)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _import_id(request: HttpRequest) -> uuid.UUID | None:
    """The import the row list is filtered to (None: none, or not an id)."""
    try:
        return uuid.UUID(request.GET.get("data_import__id__exact", ""))
    except ValueError:
        return None
