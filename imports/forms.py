"""The import wizard's forms: the upload with its configuration, and reconfiguring."""

from __future__ import annotations

from typing import Any

from django import forms

from finance.models import Account
from imports.parsing.dates import DATE_FORMATS
from imports.parsing.numbers import NUMBER_FORMATS
from imports.services.config import DEFAULTS, LABEL_DEFAULTS, SIGNAGE

SEPARATOR_CHOICES = [("", "detect"), (",", "comma"), (";", "semicolon"), ("tab", "tab")]


class ImportConfigForm(forms.Form):
    """Every configuration key of the import service, with its default."""

    date_format = forms.ChoiceField(choices=[(f, f) for f in DATE_FORMATS])
    number_format = forms.ChoiceField(choices=[(f, f) for f in NUMBER_FORMATS])
    signage_convention = forms.ChoiceField(
        choices=[(s, s.replace("_", " ")) for s in SIGNAGE],
        help_text="inflows positive: money in is +; inflows negative: spending is +",
    )
    col_sep = forms.ChoiceField(choices=SEPARATOR_CHOICES, required=False, label="Separator")
    rows_to_skip = forms.IntegerField(min_value=0, max_value=1000, initial=0)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key in LABEL_DEFAULTS:
            label = key.removesuffix("_col_label") + " column"
            self.fields[key] = forms.CharField(max_length=255, required=False, label=label)
        for key, field in self.fields.items():
            if key in DEFAULTS and field.initial is None:
                field.initial = DEFAULTS[key]

    def configuration(self) -> dict[str, str]:
        return {k: str(v) for k, v in self.cleaned_data.items() if k in DEFAULTS and v is not None}


class ImportUploadForm(ImportConfigForm):
    file = forms.FileField(label="CSV file")
    account = forms.ModelChoiceField(
        queryset=Account.objects.none(),
        required=False,
        help_text="Every row goes to this account; leave empty when the file has an account "
        "column.",
    )
    field_order = ["file", "account"]

    def __init__(self, *args: Any, accounts: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["account"].queryset = accounts
        self.order_fields(self.field_order)
