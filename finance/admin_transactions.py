"""The transactions' admin pages: list and change form."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from finance.admin_base import HouseholdAdmin, HouseholdRelatedFilter
from finance.models import Family, Transaction
from finance.money import format_amount
from finance.services.ledger import ledger_changed, merge_account_dates


@admin.register(Transaction)
class TransactionAdmin(HouseholdAdmin):
    list_display = ("date", "name", "amount_display", "account", "category", "kind", "pending")
    list_filter = (
        ("account", HouseholdRelatedFilter),
        "date",
        ("category", HouseholdRelatedFilter),
        "pending",
    )
    search_fields = ("name",)
    date_hierarchy = "date"
    autocomplete_fields = ("account", "category", "merchant", "tags")
    list_select_related = ("account", "category")
    readonly_fields = ("provider_snapshot", "import_id", "created_at", "updated_at")

    @admin.display(description="amount", ordering="amount")
    def amount_display(self, obj: Transaction) -> str:
        return f"{format_amount(obj.amount, obj.currency)} {obj.currency}"

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        initial = super().get_changeform_initial_data(request)
        family = getattr(request.user, "family", None)
        if family is not None:
            initial.setdefault("currency", family.currency)
        return initial

    def save_model(self, request: HttpRequest, obj: Transaction, form: Any, change: bool) -> None:
        changed: dict[Any, Any] = {}
        if change:
            old = Transaction.objects.get(pk=obj.pk)
            merge_account_dates(changed, old.account_id, old.date)
        obj.family = obj.account.family  # a transaction belongs to its account's household
        super().save_model(request, obj, form, change)
        merge_account_dates(changed, obj.account_id, obj.date)
        ledger_changed(family=obj.family, account_dates=changed)

    def delete_model(self, request: HttpRequest, obj: Transaction) -> None:
        family, account_dates = obj.family, {obj.account_id: obj.date}
        super().delete_model(request, obj)
        ledger_changed(family=family, account_dates=account_dates)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        touched: dict[Any, dict[Any, Any]] = {}
        for account_id, family_id, date in queryset.values_list("account_id", "family_id", "date"):
            merge_account_dates(touched.setdefault(family_id, {}), account_id, date)
        super().delete_queryset(request, queryset)
        for family in Family.objects.filter(pk__in=list(touched)):
            ledger_changed(family=family, account_dates=touched[family.pk])
