"""The transactions' admin pages: list and change form."""

from __future__ import annotations

from typing import Any

from django import forms
from django.apps import apps
from django.contrib import admin, messages
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import mark_safe

from core.errors import ApplicationError, ValidationFailed
from finance.admin_base import HouseholdAdmin, HouseholdRelatedFilter, scope_queryset
from finance.admin_rules import rules_applied_html
from finance.admin_transaction_list import (
    DateRangeFilter,
    TransactionActionForm,
    TransactionForm,
    TransactionListForm,
)
from finance.labels import NONE, counted
from finance.models import Category, Tag, Transaction
from finance.services.transactions import (
    transaction_create,
    transaction_delete,
    transaction_update,
)
from finance.services.transactions_batch import (
    transactions_categorise,
    transactions_delete,
    transactions_exclude,
    transactions_tag,
)
from finance.templatetags.finance_admin import definition_list, flow, flow_class


@admin.register(Transaction)
class TransactionAdmin(HouseholdAdmin):
    # A reduced column set that fits a laptop beside the filters: the account and tags go
    # under the name; on a phone the stylesheet hides notes (admin.css).
    list_display = ("date", "name_display", "amount_display", "category", "notes")
    list_display_links = ("date", "name_display")
    list_editable = ("category", "notes")
    list_filter = (
        ("account", HouseholdRelatedFilter),
        ("date", DateRangeFilter),
        ("category", HouseholdRelatedFilter),
        ("tags", HouseholdRelatedFilter),
        "pending",
        "excluded",
    )
    search_fields = ("name", "notes", "merchant__name")
    date_hierarchy = "date"
    # Plain choices (a household has tens of accounts and categories): select2's autocomplete
    # fails the accessibility pass (unlabelled search inputs).
    list_select_related = ("account", "category", "family")
    readonly_fields = (
        "rules_applied", "bank_data", "import_link", "external_id", "source", "excluded_by_sync",
        "pending_settled", "created_at", "updated_at",
    )  # fmt: skip
    # What a household edits first; where the row came from folded away under "Details". Given
    # by get_fieldsets: the system check refuses `tags` (its own through model) in `fieldsets`.
    page_fieldsets = (
        (None, {"fields": (
            "account", "date", "amount", "currency", "name", "category", "merchant", "tags",
            "notes", "kind", "pending", "excluded", "rules_applied",
        )}),
        ("Details", {"classes": ("collapse",), "fields": (
            "bank_data", "import_link", "external_id", "source",
            "excluded_by_sync", "pending_settled", "created_at", "updated_at",
        )}),
    )  # fmt: skip
    exclude = ("rule_changes", "edited_fields", "provider_snapshot", "import_id")
    form = TransactionForm
    action_form = TransactionActionForm
    actions = (
        "categorise_selected",
        "tag_selected",
        "exclude_selected",
        "include_selected",
        "create_rule",
    )

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name != "tags":
            return super().formfield_for_manytomany(db_field, request, **kwargs)
        # The admin shows no field for a many-to-many with its own through model; the columns
        # TransactionTag adds are kept by triggers, so the form may `.set()` tags as before.
        kwargs.setdefault("widget", forms.CheckboxSelectMultiple)
        field = db_field.formfield(**kwargs)
        field.queryset = scope_queryset(field.queryset, request)
        return field

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).prefetch_related("tags")

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.page_fieldsets

    @admin.display(description="name", ordering="name")
    def name_display(self, obj: Transaction) -> str:
        badges = ""
        if obj.pending:
            badges += ' <span class="pf-badge pf-badge-pending">Pending</span>'
        if obj.excluded:
            badges += ' <span class="pf-badge pf-badge-muted">Excluded</span>'
        tags = ", ".join(tag.name for tag in obj.tags.all())
        return format_html(
            '{}{}<span class="pf-sub">{}{}</span>',
            obj.name or "(no name)",
            mark_safe(badges),  # noqa: S308 - fixed markup
            obj.account.name,
            f" · {tags}" if tags else "",
        )

    @admin.display(description="from the bank")
    def bank_data(self, obj: Transaction) -> str:
        return definition_list(obj.provider_snapshot) if obj.provider_snapshot else NONE

    @admin.display(description="import")
    def import_link(self, obj: Transaction) -> str:
        if not obj.import_id:
            return NONE
        imp = apps.get_model("imports", "Import").objects.filter(pk=obj.import_id).first()
        if imp is None:
            return NONE
        url = reverse("admin:imports_import_change", args=[imp.pk])
        return format_html('<a href="{}">{}</a>', url, imp.original_filename or "the import")

    @admin.display(description="amount", ordering="amount")
    def amount_display(self, obj: Transaction) -> str:
        return format_html('<span class="{}">{}</span>', flow_class(obj), flow(obj))

    @admin.display(description="rules")
    def rules_applied(self, obj: Transaction) -> str:
        return rules_applied_html(obj) if obj.pk else NONE

    @admin.action(description="Create rule from this transaction", permissions=["change"])
    def create_rule(self, request: HttpRequest, queryset: QuerySet) -> Any:
        txn = queryset.order_by("-date", "-created_at", "-id").first()
        if txn is None:
            return None
        if queryset.count() > 1:
            self.message_user(request, "The rule is made from the newest one.", messages.INFO)
        url = reverse("admin:finance_rule_add")
        return HttpResponseRedirect(f"{url}?{urlencode({'from_transaction': txn.pk})}")

    def get_changelist_form(self, request: HttpRequest, **kwargs: Any) -> Any:
        # A class of its own per request: the category choices it caches are this household's.
        form = type("TransactionListPageForm", (TransactionListForm,), {"_choices": None})
        kwargs.setdefault("form", form)
        return super().get_changelist_form(request, **kwargs)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        response = super().changelist_view(request, extra_context)
        action_form = getattr(response, "context_data", {}).get("action_form")
        if action_form is not None:  # offer only the household's categories and tags
            for name, model in (("category", Category), ("tag", Tag)):
                action_form.fields[name].queryset = scope_queryset(
                    model.objects.order_by("name"), request
                )
        return response

    def _apply(self, request: HttpRequest, queryset: QuerySet, service: Any, **kwargs: Any) -> None:
        try:
            count = service(transactions=queryset, **kwargs)
        except ValidationFailed as exc:
            self.message_user(request, exc.message, messages.ERROR)
        else:
            self.message_user(
                request,
                f"{counted(count, 'transaction', 'transactions')} updated.",
                messages.SUCCESS,
            )

    def _chosen(self, request: HttpRequest, model: type, field: str) -> Any:
        value = request.POST.get(field) or None
        if value is None:
            return None
        try:
            chosen = scope_queryset(model.objects.filter(pk=value), request).first()
        except (ValueError, DjangoValidationError):
            chosen = None
        if chosen is None:
            raise ValidationFailed([f"{field}: not found"])
        return chosen

    @admin.action(description="Categorise selected (choose the category)", permissions=["change"])
    def categorise_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        try:
            category = self._chosen(request, Category, "category")
        except ValidationFailed as exc:
            return self.message_user(request, exc.message, messages.ERROR)
        self._apply(request, queryset, transactions_categorise, category=category)

    @admin.action(description="Tag selected (choose the tag)", permissions=["change"])
    def tag_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        try:
            tag = self._chosen(request, Tag, "tag")
        except ValidationFailed as exc:
            return self.message_user(request, exc.message, messages.ERROR)
        if tag is None:
            return self.message_user(request, "Choose a tag to add.", messages.ERROR)
        self._apply(request, queryset, transactions_tag, tag=tag)

    @admin.action(description="Exclude selected from balances and reports", permissions=["change"])
    def exclude_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._apply(request, queryset, transactions_exclude, excluded=True)

    @admin.action(description="Include selected again", permissions=["change"])
    def include_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._apply(request, queryset, transactions_exclude, excluded=False)

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        initial = super().get_changeform_initial_data(request)
        family = getattr(request.user, "family", None)
        if family is not None:
            initial.setdefault("currency", family.currency)
        return initial

    def save_model(self, request: HttpRequest, obj: Transaction, form: Any, change: bool) -> None:
        """The admin writes through the same services as the API."""
        try:
            if change:
                txn = Transaction.objects.select_related("family").get(pk=obj.pk)
                transaction_update(txn=txn, **admin_fields(form, form.changed_data))
            else:
                created, _ = transaction_create(
                    family=obj.account.family, **admin_fields(form, form.cleaned_data)
                )
                obj.pk = created.pk
                obj._state.adding = False
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        # Tags were written by the service with the row; only inline formsets remain.
        for formset in formsets:
            self.save_formset(request, form, formset, change=change)

    def delete_model(self, request: HttpRequest, obj: Transaction) -> None:
        try:
            transaction_delete(txn=obj)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        transactions_delete(transactions=queryset)


_REFERENCES = ("account", "category", "merchant")
_VALUES = (
    "date",
    "amount",
    "currency",
    "name",
    "notes",
    "external_id",
    "source",
    "excluded",
    "pending",
    "kind",
)


def admin_fields(form: Any, names: Any) -> dict[str, Any]:
    """The service's keyword arguments for the form fields named."""
    out: dict[str, Any] = {}
    for name in names:
        if name not in form.cleaned_data:
            continue
        value = form.cleaned_data[name]
        if name in _REFERENCES:
            out[f"{name}_id"] = value.pk if value is not None else None
        elif name == "tags":
            out["tag_ids"] = [tag.pk for tag in value]
        elif name in _VALUES:
            out[name] = value
    return out
