"""The account's admin pages: list and change form."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.http import HttpRequest, HttpResponse

from finance.admin_base import HouseholdAdmin
from finance.charts import line_chart
from finance.models import Account
from finance.money import format_amount
from finance.selectors.account_page import account_page_context
from finance.services.ledger import ledger_changed


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

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        account = self.get_object(request, unquote(object_id))
        if account is not None:
            page = account_page_context(account=account)
            page["balance_chart"] = line_chart(
                page["balance_points"], currency=account.currency, label="daily balance"
            )
            extra_context = {**(extra_context or {}), **page}
        return super().change_view(request, object_id, form_url, extra_context)

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
