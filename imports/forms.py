"""The import wizard's forms: the upload with its configuration, and reconfiguring."""

from __future__ import annotations

from typing import Any

from django import forms

from finance.models import Account
from imports.models import Import
from imports.parsing.dates import DATE_FORMATS
from imports.parsing.numbers import NUMBER_FORMATS
from imports.services.config import DEFAULTS, LABEL_DEFAULTS, SIGNAGE

SEPARATOR_CHOICES = [("", "detect"), (",", "comma"), (";", "semicolon"), ("tab", "tab")]
FORMAT_CHOICES = [
    ("", "detect from the file"),
    (Import.Type.TRANSACTION, "CSV"),
    (Import.Type.OFX, "OFX / QFX"),
    (Import.Type.QIF, "QIF"),
    (Import.Type.CAMT053, "CAMT.053 (ISO 20022 XML)"),
    (Import.Type.MT940, "MT940 (SWIFT)"),
]
SET_BALANCE_CHOICES = [
    ("auto", "yes, unless a bank connection keeps the account's balance"),
    ("true", "yes"),
    ("false", "no"),
]


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
    set_balance = forms.ChoiceField(
        choices=SET_BALANCE_CHOICES,
        required=False,
        label="Take the statement's balance",
        help_text="statement files: the closing balance becomes the account's balance",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key in LABEL_DEFAULTS:
            label = key.removesuffix("_col_label") + " column"
            self.fields[key] = forms.CharField(max_length=255, required=False, label=label)
        for key, field in self.fields.items():
            if key in DEFAULTS and field.initial is None:
                field.initial = DEFAULTS[key]

    def configuration(self) -> dict[str, str]:
        out = {k: str(v) for k, v in self.cleaned_data.items() if k in DEFAULTS and v is not None}
        if not out.get("set_balance"):
            out.pop("set_balance", None)
        return out


class StatementConfigForm(forms.Form):
    """What a statement file's reading depends on (its columns and separator are fixed)."""

    date_format = forms.ChoiceField(
        choices=[(f, f) for f in DATE_FORMATS], help_text="QIF: the order of day and month"
    )
    number_format = forms.ChoiceField(
        choices=[(f, f) for f in NUMBER_FORMATS], help_text="QIF amounts"
    )
    signage_convention = forms.ChoiceField(
        choices=[(s, s.replace("_", " ")) for s in SIGNAGE],
        help_text="OFX and QIF: flip only for a bank that writes money out as positive",
    )
    set_balance = forms.ChoiceField(
        choices=SET_BALANCE_CHOICES, label="Take the statement's balance"
    )

    def configuration(self) -> dict[str, str]:
        return {k: str(v) for k, v in self.cleaned_data.items() if v not in (None, "")}


class ImportUploadForm(ImportConfigForm):
    file = forms.FileField(
        label="File", help_text="a bank export: CSV, OFX or QFX, QIF, CAMT.053 or MT940"
    )
    type = forms.ChoiceField(choices=FORMAT_CHOICES, required=False, label="Format")
    account = forms.ModelChoiceField(
        queryset=Account.objects.none(),
        required=False,
        help_text="Every row goes to this account; leave empty when the file has an account "
        "column or several statements (you map each statement's account next).",
    )
    field_order = ["file", "type", "account"]

    def __init__(self, *args: Any, accounts: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["account"].queryset = accounts
        self.order_fields(self.field_order)
