"""Parts of the transactions list in the admin: the date range filter, the bulk action form and
the inline-edit form."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.helpers import ActionForm
from django.db.models import QuerySet
from django.http import HttpRequest

from finance.labels import label_for
from finance.models import Category, Tag, Transaction
from finance.money import quantize


class DateRangeFilter(admin.FieldListFilter):
    """From/to dates (inclusive), either optional, as two date inputs."""

    template = "admin/finance/transaction/date_range_filter.html"

    def __init__(self, field: Any, request: HttpRequest, params: Any, model: Any, model_admin: Any,
                 field_path: str) -> None:  # fmt: skip
        self.gte = f"{field_path}__gte"
        self.lte = f"{field_path}__lte"
        super().__init__(field, request, params, model, model_admin, field_path)
        for name in (self.gte, self.lte):
            value = params.pop(name, None) or self.used_parameters.get(name)
            if isinstance(value, list):
                value = value[-1] if value else None
            if value:
                self.used_parameters[name] = str(value)
            else:
                self.used_parameters.pop(name, None)
        self.title = "date range"

    def expected_parameters(self) -> list[str]:
        return [self.gte, self.lte]

    def has_output(self) -> bool:
        return True

    def _date(self, name: str) -> dt.date | None:
        try:
            return dt.date.fromisoformat(self.used_parameters.get(name, ""))
        except ValueError:
            return None

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        start, end = self._date(self.gte), self._date(self.lte)
        if start:
            queryset = queryset.filter(**{self.gte: start})
        if end:
            queryset = queryset.filter(**{self.lte: end})
        return queryset

    def choices(self, changelist: Any) -> Any:
        mine = {self.gte, self.lte}
        yield {
            "gte_name": self.gte,
            "lte_name": self.lte,
            "gte": self.used_parameters.get(self.gte, ""),
            "lte": self.used_parameters.get(self.lte, ""),
            "hidden": [
                (key, value)
                for key, values in changelist.params.items()
                if key not in mine and key != "p"
                for value in (values if isinstance(values, list) else [values])
            ],
            "clear_url": changelist.get_query_string(remove=[self.gte, self.lte, "p"]),
            "active": bool(mine & set(self.used_parameters)),
        }


class TransactionActionForm(ActionForm):
    """The bulk actions' parameters; the choices shown are narrowed to the household's own in
    the changelist view, and the actions check the household again."""

    category = forms.ModelChoiceField(
        queryset=Category.objects.all(), required=False, empty_label="(category)"
    )
    tag = forms.ModelChoiceField(queryset=Tag.objects.all(), required=False, empty_label="(tag)")


class TransactionListForm(forms.ModelForm):
    """Inline edit of category and notes: the category must be the transaction's household's.

    The category is a plain choice: no add, change, view or delete icons in every row."""

    class Meta:
        model = Transaction
        fields = ("category", "notes")
        widgets = {"notes": forms.TextInput(attrs={"size": 18, "aria-label": "Notes"})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        category = self.fields["category"]
        category.widget = forms.Select(attrs={"aria-label": "Category"})
        category.widget.choices = self.category_choices(category)

    @classmethod
    def category_choices(cls, field: Any) -> list:
        """The household's categories, read once for the whole page (not once a row)."""
        if getattr(cls, "_choices", None) is None:
            cls._choices = list(field.choices)
        return cls._choices

    def clean_category(self) -> Category | None:
        category = self.cleaned_data.get("category")
        if category is not None and category.family_id != self.instance.family_id:
            raise forms.ValidationError("This category belongs to another household.")
        return category


class TransactionForm(forms.ModelForm):
    """The change form: the amount signed as the list shows it (money out negative), at the
    currency's precision; the ledger keeps money out positive (decisions.md)."""

    class Meta:
        model = Transaction
        fields = "__all__"  # noqa: DJ007 - the admin passes its own field list
        help_texts = {"amount": "Money out is negative (-12.50), money in positive (2,500.00)."}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "kind" in self.fields:
            self.fields["kind"].choices = [
                (value, label_for("kind", value) if value else text)
                for value, text in self.fields["kind"].choices
            ]
        stored = self.initial.get("amount")
        if stored is not None:
            currency = self.instance.currency or "USD"
            self.initial["amount"] = quantize(-Decimal(stored), currency)

    def clean_amount(self) -> Decimal | None:
        amount = self.cleaned_data.get("amount")
        return None if amount is None else -amount
