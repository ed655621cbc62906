"""The account's admin pages: list and change form."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from finance.admin_base import HouseholdAdmin, user_family
from finance.charts import line_chart
from finance.labels import NONE
from finance.models import Account
from finance.money import quantize
from finance.selectors.account_page import account_page_context
from finance.services.accounts import account_create, account_delete, account_update
from finance.templatetags.finance_admin import money_text, when


class AccountForm(forms.ModelForm):
    """The opening balance at the currency's precision ("1523.47", not "1523.4700")."""

    class Meta:
        model = Account
        fields = "__all__"  # noqa: DJ007 - the admin passes its own field list

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        opening = self.initial.get("opening_balance")
        if opening is not None and self.instance.currency:
            self.initial["opening_balance"] = quantize(opening, self.instance.currency)


@admin.register(Account)
class AccountAdmin(HouseholdAdmin):
    form = AccountForm
    list_display = ("name", "account_type", "status", "balance_display", "institution_name")
    list_filter = ("account_type", "status")
    search_fields = ("name", "institution_name")
    readonly_fields = ("balance_text", "holdings_text", "reported_text")
    exclude = ("balance", "holdings_value", "reported_balance", "reported_balance_at")

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
        return money_text(obj.balance, obj.currency)

    @admin.display(description="balance")
    def balance_text(self, obj: Account) -> str:
        return money_text(obj.balance, obj.currency) if obj.pk else NONE

    @admin.display(description="of which investments")
    def holdings_text(self, obj: Account) -> str:
        return money_text(obj.holdings_value, obj.currency) if obj.holdings_value else NONE

    @admin.display(description="balance the bank reports")
    def reported_text(self, obj: Account) -> str:
        if obj.reported_balance is None:
            return NONE
        return f"{money_text(obj.reported_balance, obj.currency)}, {when(obj.reported_balance_at)}"

    def save_model(self, request: HttpRequest, obj: Account, form: Any, change: bool) -> None:
        """The admin writes through the same services as the API."""
        if change:
            fields = {n: form.cleaned_data[n] for n in form.changed_data if n in ACCOUNT_FIELDS}
            account_update(
                account=Account.objects.select_related("family").get(pk=obj.pk), **fields
            )
            return
        family = obj.family if obj.family_id else user_family(request)
        fields = {n: form.cleaned_data.get(n) for n in ACCOUNT_FIELDS if n in form.cleaned_data}
        created = account_create(family=family, **fields)
        obj.pk = created.pk
        obj._state.adding = False

    def delete_model(self, request: HttpRequest, obj: Account) -> None:
        account_delete(account=obj, cascade=True)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for account in queryset.select_related("family"):
            account_delete(account=account, cascade=True)


ACCOUNT_FIELDS = {
    "name": "name",
    "account_type": "account_type",
    "status": "status",
    "currency": "currency",
    "institution_name": "institution_name",
    "opening_balance": "balance",
    "opening_balance_date": "balance_date",
}


def _service_fields(form: Any, names: Any) -> dict[str, Any]:
    """The account services' keyword arguments for the form fields named."""
    out = {
        ACCOUNT_FIELDS[n]: form.cleaned_data.get(n)
        for n in names
        if n in ACCOUNT_FIELDS and n in form.cleaned_data
    }
    if out.get("balance_date") is None:
        out.pop("balance_date", None)
    return out
