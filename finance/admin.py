from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.formats import date_format

from finance import admin_accounts, admin_rules, admin_transactions  # noqa: F401  (registers)
from finance.admin_base import HouseholdAdmin, HouseholdRelatedFilter
from finance.labels import counted
from finance.models import (
    Category,
    Family,
    Merchant,
    RejectedTransfer,
    Tag,
    Transfer,
    User,
)
from finance.services.transfers import transfer_confirm, transfer_reject
from finance.templatetags.finance_admin import money_text


@admin.register(Family)
class FamilyAdmin(admin.ModelAdmin):
    list_display = ("name", "currency", "timezone", "created_at")
    search_fields = ("name",)


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    ordering = ("email",)
    list_display = ("email", "family", "is_staff", "is_superuser", "is_active")
    list_select_related = ("family",)  # nullable: the admin's own select_related() skips it
    search_fields = ("email",)
    fieldsets = (
        (None, {"fields": ("email", "password", "family")}),
        ("Personal info", {"fields": ("first_name", "last_name")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups")}),
    )
    add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("email", "family", "password1", "password2")}),
    )


@admin.register(Category)
class CategoryAdmin(HouseholdAdmin):
    list_display = ("name", "parent", "color", "icon")
    list_select_related = ("parent",)  # nullable: the admin's own select_related() skips it
    list_filter = (("parent", HouseholdRelatedFilter),)
    search_fields = ("name",)


@admin.register(Merchant)
class MerchantAdmin(HouseholdAdmin):
    list_display = ("name", "created_at")
    search_fields = ("name",)


@admin.register(Tag)
class TagAdmin(HouseholdAdmin):
    list_display = ("name", "color")
    search_fields = ("name",)


@admin.register(Transfer)
class TransferAdmin(HouseholdAdmin):
    list_display = ("route", "when", "amount", "status")
    ordering = ("-outflow_transaction__date", "-created_at")
    list_filter = ("status",)
    list_select_related = (
        "outflow_transaction__account", "inflow_transaction__account"
    )  # fmt: skip
    search_fields = ("outflow_transaction__name", "inflow_transaction__name")
    readonly_fields = ("inflow_transaction", "outflow_transaction", "status")
    actions = ("confirm_transfers", "reject_transfers")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # transfers are suggested by matching or linked through the API

    @admin.display(description="transfer")
    def route(self, obj: Transfer) -> str:
        out, into = obj.outflow_transaction, obj.inflow_transaction
        return f"{out.account.name} → {into.account.name}: {out.name}"

    @admin.display(description="date", ordering="outflow_transaction__date")
    def when(self, obj: Transfer) -> str:
        return date_format(obj.outflow_transaction.date)

    @admin.display(description="amount")
    def amount(self, obj: Transfer) -> str:
        return money_text(obj.outflow_transaction.amount, obj.outflow_transaction.currency)

    @admin.action(description="Confirm selected transfers", permissions=["change"])
    def confirm_transfers(self, request: HttpRequest, queryset: QuerySet) -> None:
        for transfer in queryset:
            transfer_confirm(transfer=transfer)
        self.message_user(
            request,
            f"{counted(queryset.count(), 'transfer', 'transfers')} confirmed.",
            messages.SUCCESS,
        )

    @admin.action(description="Reject selected transfers", permissions=["change"])
    def reject_transfers(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = 0
        for transfer in list(queryset):
            transfer_reject(transfer=transfer)
            count += 1
        self.message_user(
            request, f"{counted(count, 'transfer', 'transfers')} rejected.", messages.SUCCESS
        )


@admin.register(RejectedTransfer)
class RejectedTransferAdmin(HouseholdAdmin):
    list_display = ("outflow_transaction", "inflow_transaction", "created_at")
    list_select_related = ("outflow_transaction", "inflow_transaction")
    search_fields = ("outflow_transaction__name", "inflow_transaction__name")
    readonly_fields = ("inflow_transaction", "outflow_transaction")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # recorded by rejecting a transfer
