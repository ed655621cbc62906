from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest

from finance.admin_base import HouseholdAdmin, HouseholdRelatedFilter
from finance.models import (
    Account,
    Category,
    Family,
    Merchant,
    RejectedTransfer,
    Tag,
    Transaction,
    Transfer,
    User,
)
from finance.money import format_amount
from finance.services.ledger import ledger_changed, merge_account_dates
from finance.services.transfers import transfer_confirm, transfer_reject


@admin.register(Family)
class FamilyAdmin(admin.ModelAdmin):
    list_display = ("name", "currency", "timezone", "created_at")
    search_fields = ("name",)


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    ordering = ("email",)
    list_display = ("email", "family", "is_staff", "is_superuser", "is_active")
    search_fields = ("email",)
    fieldsets = (
        (None, {"fields": ("email", "password", "family")}),
        ("Personal info", {"fields": ("first_name", "last_name")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups")}),
    )
    add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("email", "family", "password1", "password2")}),
    )


@admin.register(Account)
class AccountAdmin(HouseholdAdmin):
    list_display = ("name", "account_type", "status", "balance_display", "institution_name")
    list_filter = ("account_type", "status")
    search_fields = ("name", "institution_name")
    readonly_fields = ("balance", "reported_balance", "reported_balance_at")

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        initial = super().get_changeform_initial_data(request)
        family = getattr(request.user, "family", None)
        if family is not None:
            initial.setdefault("currency", family.currency)
        return initial

    @admin.display(description="balance", ordering="balance")
    def balance_display(self, obj: Account) -> str:
        return f"{format_amount(obj.balance, obj.currency)} {obj.currency}"

    def save_model(self, request: HttpRequest, obj: Account, form: Any, change: bool) -> None:
        if not obj.currency:
            family = obj.family if obj.family_id else getattr(request.user, "family", None)
            obj.currency = family.currency if family else "USD"
        super().save_model(request, obj, form, change)
        if change and {"account_type", "currency"} & set(form.changed_data):
            ledger_changed(family=obj.family, account_dates={obj.pk: None})


@admin.register(Category)
class CategoryAdmin(HouseholdAdmin):
    list_display = ("name", "parent", "color", "icon")
    list_filter = (("parent", HouseholdRelatedFilter),)
    search_fields = ("name",)
    autocomplete_fields = ("parent",)


@admin.register(Merchant)
class MerchantAdmin(HouseholdAdmin):
    list_display = ("name", "created_at")
    search_fields = ("name",)


@admin.register(Tag)
class TagAdmin(HouseholdAdmin):
    list_display = ("name", "color")
    search_fields = ("name",)


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


@admin.register(Transfer)
class TransferAdmin(HouseholdAdmin):
    list_display = ("__str__", "status", "outflow_transaction", "inflow_transaction", "created_at")
    list_filter = ("status",)
    list_select_related = ("outflow_transaction", "inflow_transaction")
    search_fields = ("outflow_transaction__name", "inflow_transaction__name")
    readonly_fields = ("inflow_transaction", "outflow_transaction", "status")
    actions = ("confirm_transfers", "reject_transfers")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # transfers are suggested by matching or linked through the API

    @admin.action(description="Confirm selected transfers", permissions=["change"])
    def confirm_transfers(self, request: HttpRequest, queryset: QuerySet) -> None:
        for transfer in queryset:
            transfer_confirm(transfer=transfer)
        self.message_user(request, f"{queryset.count()} transfer(s) confirmed.", messages.SUCCESS)

    @admin.action(description="Reject selected transfers", permissions=["change"])
    def reject_transfers(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = 0
        for transfer in list(queryset):
            transfer_reject(transfer=transfer)
            count += 1
        self.message_user(request, f"{count} transfer(s) rejected.", messages.SUCCESS)


@admin.register(RejectedTransfer)
class RejectedTransferAdmin(HouseholdAdmin):
    list_display = ("__str__", "outflow_transaction", "inflow_transaction", "created_at")
    list_select_related = ("outflow_transaction", "inflow_transaction")
    search_fields = ("outflow_transaction__name", "inflow_transaction__name")
    readonly_fields = ("inflow_transaction", "outflow_transaction")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # recorded by rejecting a transfer
