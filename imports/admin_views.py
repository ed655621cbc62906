"""The import wizard's views: upload, review (rows, mappings, configuration), publish with its
progress, readback, revert. Each calls the same service the API does."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from core.errors import ApplicationError, ValidationFailed
from finance.admin_base import scope_queryset, user_family
from finance.labels import label_for
from finance.models import Account, Category, Tag
from finance.money import format_amount
from imports.forms import ImportConfigForm, ImportUploadForm, StatementConfigForm
from imports.models import Import, ImportMapping, ImportStatement
from imports.parsing.dates import DEFAULT_DATE_FORMAT
from imports.selectors import ImportRowFilters, as_listed, import_row_list
from imports.services.formats import import_type_detect
from imports.services.mappings import import_mappings_update, import_rows_skip_invalid
from imports.services.parse import import_configure, import_create
from imports.services.progress import progress_read
from imports.services.publish import import_blockers, import_publish
from imports.services.revert import import_revert

ROWS_PER_PAGE = 50
ROW_FILTERS = {
    "invalid": ImportRowFilters(valid=False),
    "duplicate": ImportRowFilters(duplicate=True),
}
TARGET_MODELS = {"category": Category, "tag": Tag, "account": Account}
KEEP_EMPTY, CREATE_NEW = "", "new"


def _render(request: HttpRequest, admin: Any, template: str, **context: Any) -> HttpResponse:
    base = {**admin.admin_site.each_context(request), "opts": admin.model._meta}
    return TemplateResponse(request, template, {**base, **context})


def _household_accounts(request: HttpRequest) -> Any:
    return scope_queryset(Account.objects.order_by("name"), request)


def import_upload(admin: Any, request: HttpRequest) -> HttpResponse:
    family = user_family(request)
    form = ImportUploadForm(
        request.POST or None, request.FILES or None, accounts=_household_accounts(request)
    )
    if family is None:
        form.add_error(None, "Imports belong to a household: log in as one of its users.")
    elif request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        if upload.size > settings.IMPORT_MAX_UPLOAD_BYTES:
            form.add_error(
                "file", f"The file is larger than {settings.IMPORT_MAX_UPLOAD_BYTES} bytes."
            )
        else:
            import_type, configuration = _upload_format(form, upload)
            try:
                imp = import_create(
                    family=family,
                    stream=upload,
                    filename=upload.name,
                    size=upload.size,
                    account=form.cleaned_data["account"],
                    configuration=configuration,
                    background=True,
                    import_type=import_type,
                )
            except ApplicationError as exc:
                form.add_error(None, exc.message)
            else:
                if imp.status == Import.Status.FAILED:
                    messages.error(request, imp.error)
                else:
                    messages.success(request, "Uploaded. Check the rows, then publish.")
                return HttpResponseRedirect(_change_url(imp))
    return _render(
        request, admin, "admin/imports/import/upload.html", form=form, title="Import a bank file"
    )


def _upload_format(form: ImportUploadForm, upload: Any) -> tuple[str, dict[str, str]]:
    """The import type (chosen, else recognised from the file's first bytes and its name) and
    its configuration."""
    configuration = form.configuration()
    import_type = form.cleaned_data.get("type") or ""
    if not import_type:
        import_type = import_type_detect(upload, upload.name or "")
    if import_type == Import.Type.QIF and configuration.get("date_format") == DEFAULT_DATE_FORMAT:
        # The form's default is year first, which no QIF writes: let QIF's own (US) default be.
        configuration.pop("date_format")
    return import_type, configuration


def review_context(imp: Import, request: HttpRequest) -> dict[str, Any]:
    """The import's page: counts, rows (paged, filtered), mappings with their choices."""
    shown = request.GET.get("rows", "")
    rows = import_row_list(data_import=imp, filters=ROW_FILTERS.get(shown, ImportRowFilters()))
    page = Paginator(rows, ROWS_PER_PAGE).get_page(request.GET.get("page"))
    page.object_list = [as_listed(row, imp) for row in page.object_list]
    mappings = list(ImportMapping.objects.filter(data_import=imp).order_by("kind", "value"))
    choices = {
        kind: list(model.objects.filter(family_id=imp.family_id).order_by("name"))
        for kind, model in TARGET_MODELS.items()
        if any(m.kind == kind for m in mappings)
    }
    pending = imp.status == Import.Status.PENDING and not imp.parsing
    statement_file = imp.type in Import.STATEMENT_TYPES
    form_class = StatementConfigForm if statement_file else ImportConfigForm
    if not pending:
        config = None
    elif statement_file:
        config = form_class(initial={**imp.configuration})
    else:
        config = form_class(initial={**imp.configuration}, headers=list(imp.headers or []))
    return {
        "imp": imp,
        "statements": _statements(imp, mappings) if statement_file else [],
        "balances_set": _balances_set(imp),
        "stats": imp.stats or {},
        "readback": (imp.verification or {}).get("readback") or {},
        "blockers": import_blockers(data_import=imp)
        if imp.status in Import.PUBLISHABLE_FROM and not imp.parsing
        else [],
        "row_page": page,
        "rows_shown": shown,
        "mappings": [(m, choices.get(m.kind, [])) for m in mappings],
        "config_form": config,
        "can_edit": pending,
        "can_publish": imp.status in Import.PUBLISHABLE_FROM and not imp.parsing,
        "can_revert": imp.status in Import.REVERTABLE_FROM,
        "busy": imp.parsing or imp.status in (Import.Status.IMPORTING, Import.Status.REVERTING),
        "CREATE_NEW": CREATE_NEW,
        "import_currency": imp.account.currency if imp.account_id else imp.family.currency,
        "show_save": False,  # every change goes through the wizard's own buttons
        "show_save_and_continue": False,
        "show_save_and_add_another": False,
    }


def _statements(imp: Import, mappings: list[ImportMapping]) -> list[dict[str, Any]]:
    """Each statement of the file with the ledger account its rows go to (or none yet)."""
    targets = {m.value: m.target_id or m.created_id for m in mappings if m.kind == "account"}
    names = dict(Account.objects.filter(family_id=imp.family_id).values_list("pk", "name"))
    out = []
    for statement in ImportStatement.objects.filter(data_import=imp).order_by("number")[:500]:
        target = imp.account_id or targets.get(statement.account_value)
        out.append({"statement": statement, "account_name": names.get(target) if target else None})
    return out


def _balances_set(imp: Import) -> list[dict[str, Any]]:
    """The reported balances the import set from its statements, with the accounts' names."""
    changes = imp.balances_set or []
    if not changes:
        return []  # most imports: no query
    names = dict(
        Account.objects.filter(
            family_id=imp.family_id, pk__in=[c["account_id"] for c in changes]
        ).values_list("pk", "name")
    )
    return [
        {
            "name": names.get(uuid.UUID(c["account_id"]), c["account_id"]),
            "balance": format_amount(Decimal(c["balance"]), c["currency"]),
            "as_of": c["at"][:10],
            "statement": c["statement"],
        }
        for c in changes
    ]


def import_mappings_save(admin: Any, request: HttpRequest, object_id: Any) -> HttpResponse:
    imp = _import(request, object_id)
    items = []
    for mapping in ImportMapping.objects.filter(data_import=imp):
        value = request.POST.get(f"mapping-{mapping.pk}")
        if value is None:
            continue
        if value == CREATE_NEW:
            items.append({"id": mapping.pk, "create_new": True})
        elif value == KEEP_EMPTY:
            items.append({"id": mapping.pk, "target_id": None, "create_new": False})
        else:
            items.append({"id": mapping.pk, "target_id": value})
    return _run(
        request,
        imp,
        lambda: import_mappings_update(data_import=imp, items=items),
        "Mappings saved.",
    )


def import_configure_save(admin: Any, request: HttpRequest, object_id: Any) -> HttpResponse:
    imp = _import(request, object_id)
    statement_file = imp.type in Import.STATEMENT_TYPES
    form = (
        StatementConfigForm(request.POST)
        if statement_file
        else ImportConfigForm(
            request.POST, initial={**imp.configuration}, headers=list(imp.headers or [])
        )
    )
    if not form.is_valid():
        messages.error(request, "Configuration: " + form.errors.as_text())
        return HttpResponseRedirect(_change_url(imp))
    return _run(
        request,
        imp,
        lambda: import_configure(
            data_import=imp, account=..., changes=form.configuration(), background=True
        ),
        "Parsed again.",
    )


def import_skip_invalid(admin: Any, request: HttpRequest, object_id: Any) -> HttpResponse:
    imp = _import(request, object_id)
    return _run(
        request, imp, lambda: import_rows_skip_invalid(data_import=imp), "Invalid rows skipped."
    )


def import_publish_view(admin: Any, request: HttpRequest, object_id: Any) -> HttpResponse:
    imp = _import(request, object_id)
    return _run(request, imp, lambda: import_publish(data_import=imp), "Publishing started.")


def import_revert_view(admin: Any, request: HttpRequest, object_id: Any) -> HttpResponse:
    imp = _import(request, object_id)
    return _run(request, imp, lambda: import_revert(data_import=imp), "Revert started.")


def import_status(admin: Any, request: HttpRequest, object_id: Any) -> JsonResponse:
    imp = _import(request, object_id)
    busy = imp.status in (Import.Status.IMPORTING, Import.Status.REVERTING)
    processed = (progress_read(imp.pk) if busy else None) or imp.rows_processed
    return JsonResponse(
        {
            "id": str(imp.pk),
            "status": imp.status,
            "status_text": label_for("import", imp.status),
            "parsing": imp.parsing,
            "rows_processed": processed,
            "rows_to_create": (imp.stats or {}).get("rows_to_create", 0),
            "readback": ((imp.verification or {}).get("readback") or {}).get(
                "status", "not_verified"
            ),
            "error": imp.error or None,
        }
    )


def _run(request: HttpRequest, imp: Import, action: Any, done: str) -> HttpResponse:
    try:
        action()
    except ValidationFailed as exc:
        messages.error(request, "; ".join(exc.errors or [exc.message]))
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, done)
    return HttpResponseRedirect(_change_url(imp))


def _import(request: HttpRequest, object_id: Any) -> Import:
    imp = scope_queryset(Import.objects.all(), request).filter(pk=object_id).first()
    if imp is None:
        raise Http404
    return imp


def _change_url(imp: Import) -> str:
    return reverse("admin:imports_import_change", args=[imp.pk])
