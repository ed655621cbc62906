"""Exchange rates in the admin: a household keeps its own rates (which its conversions prefer
over the system's); staff also see and correct system rates (no household)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from core.bounds import date_problem
from finance.admin_base import HouseholdAdmin, is_staff_operator, user_family
from finance.currencies import is_currency
from finance.fx.bounds import DATE_RANGE_MESSAGE, RATE_MESSAGE, rate_parse
from finance.models import ExchangeRate, Family
from finance.serializers.fx import SAME_CURRENCY, rate_text

DUPLICATE = "There is already a rate for this day and pair: change that one."


class ExchangeRateForm(forms.ModelForm):
    household: Family | None = None  # a household user's family (the field is not shown)

    class Meta:
        model = ExchangeRate
        fields = ("family", "date", "from_currency", "to_currency", "rate")

    def _currency(self, name: str) -> str:
        code = (self.cleaned_data.get(name) or "").strip().upper()
        if not is_currency(code):
            raise forms.ValidationError("Not an ISO 4217 currency code.")
        return code

    def clean_from_currency(self) -> str:
        return self._currency("from_currency")

    def clean_to_currency(self) -> str:
        return self._currency("to_currency")

    def clean_date(self) -> Any:
        value = self.cleaned_data.get("date")
        if value is not None and date_problem(value):
            raise forms.ValidationError(f"The date {DATE_RANGE_MESSAGE}.")
        return value

    def clean_rate(self) -> Any:
        value = self.cleaned_data.get("rate")
        rate = rate_parse(value) if value is not None else None
        if rate is None:
            raise forms.ValidationError(f"The rate {RATE_MESSAGE}.")
        return rate

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        family = data.get("family") if "family" in self.fields else self.household
        pair = (data.get("from_currency"), data.get("to_currency"))
        if pair[0] and pair[0] == pair[1]:
            self.add_error("to_currency", f"The currency {SAME_CURRENCY}.")
        elif all(pair) and data.get("date"):
            same = ExchangeRate.objects.filter(
                date=data["date"], from_currency=pair[0], to_currency=pair[1]
            ).exclude(pk=self.instance.pk)
            same = same.filter(family=family) if family else same.filter(family__isnull=True)
            if same.exists():
                raise forms.ValidationError(DUPLICATE)
        return data


@admin.register(ExchangeRate)
class ExchangeRateAdmin(HouseholdAdmin):
    form = ExchangeRateForm
    list_display = ("date", "from_currency", "to_currency", "rate_display", "source")
    list_filter = ("from_currency", "to_currency", "source")
    search_fields = ("from_currency", "to_currency")
    date_hierarchy = "date"

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        form = super().get_form(request, obj, change=change, **kwargs)
        form.household = None if is_staff_operator(request) else user_family(request)
        return form

    @admin.display(description="rate", ordering="rate")
    def rate_display(self, obj: ExchangeRate) -> str:
        return rate_text(obj.rate)

    def save_model(self, request: HttpRequest, obj: ExchangeRate, form: Any, change: bool) -> None:
        if not change:
            if not obj.family_id and not is_staff_operator(request):
                obj.family = user_family(request)
            # Staff leaving the household empty enter a system rate.
            obj.source = (
                ExchangeRate.SOURCE_HOUSEHOLD if obj.family_id else ExchangeRate.SOURCE_MANUAL
            )
        admin.ModelAdmin.save_model(self, request, obj, form, change)
