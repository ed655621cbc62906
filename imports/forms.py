"""The import wizard's forms: the upload with its configuration, and reconfiguring."""

from __future__ import annotations

from typing import Any

from django import forms

from finance.labels import date_example
from finance.models import Account
from imports.models import Import
from imports.parsing.dates import DATE_FORMATS
from imports.parsing.numbers import NUMBER_FORMATS
from imports.services.config import DEFAULTS, LABEL_DEFAULTS, SIGNAGE

SEPARATOR_CHOICES = [("", "detect"), (",", "comma"), (";", "semicolon"), ("tab", "tab")]
# Date formats offered as the date they read ("31/12/2024"), numbers as they look.
DATE_CHOICES = [(f, date_example(f)) for f in DATE_FORMATS]
NUMBER_CHOICES = [(f, f) for f in NUMBER_FORMATS]
SIGNAGE_CHOICES = [
    ("inflows_positive", "money in is positive, money out negative"),
    ("inflows_negative", "money out is positive (spending as +)"),
]
assert {key for key, _ in SIGNAGE_CHOICES} == set(SIGNAGE)
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

    date_format = forms.ChoiceField(choices=DATE_CHOICES, help_text="how 31 December 2024 looks")
    number_format = forms.ChoiceField(choices=NUMBER_CHOICES)
    signage_convention = forms.ChoiceField(choices=SIGNAGE_CHOICES, label="Signs")
    col_sep = forms.ChoiceField(choices=SEPARATOR_CHOICES, required=False, label="Separator")
    rows_to_skip = forms.IntegerField(min_value=0, max_value=1000, initial=0, label="Rows to skip")
    set_balance = forms.ChoiceField(
        choices=SET_BALANCE_CHOICES,
        required=False,
        label="Take the statement's balance",
        help_text="statement files: the closing balance becomes the account's balance",
    )

    def __init__(self, *args: Any, headers: list[str] | None = None, **kwargs: Any) -> None:
        """With the file's `headers` known, each column is picked from them."""
        super().__init__(*args, **kwargs)
        for key in LABEL_DEFAULTS:
            label = key.removesuffix("_col_label").capitalize() + " column"
            if headers:
                current = str((self.initial or {}).get(key) or "")
                names = list(dict.fromkeys([*headers, *([current] if current else [])]))
                choices = [("", "(none)"), *((h, h) for h in names)]
                self.fields[key] = forms.ChoiceField(choices=choices, required=False, label=label)
            else:
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
        choices=DATE_CHOICES, help_text="QIF: how 31 December 2024 looks"
    )
    number_format = forms.ChoiceField(choices=NUMBER_CHOICES, help_text="QIF amounts")
    signage_convention = forms.ChoiceField(
        choices=SIGNAGE_CHOICES,
        label="Signs",
        help_text="OFX and QIF: change only for a bank that writes money out as positive",
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
