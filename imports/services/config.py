"""An import's configuration: every value a string, defaults filled, choices checked."""

from __future__ import annotations

from typing import TypedDict

from core.errors import ValidationFailed
from imports.parsing.csvfile import SEPARATORS
from imports.parsing.dates import DATE_FORMATS, DEFAULT_DATE_FORMAT
from imports.parsing.numbers import DEFAULT_NUMBER_FORMAT, NUMBER_FORMATS

LABEL_DEFAULTS = {
    "date_col_label": "date",
    "amount_col_label": "amount",
    "name_col_label": "name",
    "category_col_label": "category",
    "tags_col_label": "tags",
    "notes_col_label": "notes",
    "account_col_label": "account",
    "currency_col_label": "currency",
}
REQUIRED_LABELS = ("date_col_label", "amount_col_label", "name_col_label")
SIGNAGE = ("inflows_positive", "inflows_negative")
# Statement files: whether a statement's closing balance becomes its account's reported
# balance; `auto` does it for accounts no provider is linked to.
SET_BALANCE = ("auto", "true", "false")
DEFAULTS = {
    **LABEL_DEFAULTS,
    "date_format": DEFAULT_DATE_FORMAT,
    "number_format": DEFAULT_NUMBER_FORMAT,
    "signage_convention": "inflows_positive",
    "rows_to_skip": "0",
    "col_sep": "",  # empty: detected from the file (then stored)
    "set_balance": "auto",
}
CONFIG_KEYS = tuple(DEFAULTS)
MAX_ROWS_TO_SKIP = 1000


class ImportOptions(TypedDict, total=False):
    """An import's configuration as a household gives it (every value text, as in a form);
    `configuration_merge` checks each one."""

    date_col_label: str
    amount_col_label: str
    name_col_label: str
    category_col_label: str
    tags_col_label: str
    notes_col_label: str
    account_col_label: str
    currency_col_label: str
    date_format: str
    number_format: str
    signage_convention: str
    rows_to_skip: str
    col_sep: str
    set_balance: str


def configuration_merge(current: dict[str, str], changes: ImportOptions) -> dict[str, str]:
    """`current` with `changes` applied; a 422 naming every bad value."""
    merged = {**DEFAULTS, **current}
    errors: list[str] = []
    for key, value in dict(changes).items():
        if key not in DEFAULTS or value is None:
            continue
        text = value if isinstance(value, str) else str(value)
        if key in LABEL_DEFAULTS:
            text = text.strip()
            if len(text) > 255 or "\x00" in text:
                errors.append(f"{key}: must be at most 255 characters of text")
                continue
            if not text and key in REQUIRED_LABELS:
                errors.append(f"{key}: must not be empty")
                continue
        elif key == "date_format" and text not in DATE_FORMATS:
            errors.append(f"date_format: must be one of {', '.join(DATE_FORMATS)}")
            continue
        elif key == "number_format" and text not in NUMBER_FORMATS:
            errors.append(f"number_format: must be one of {', '.join(NUMBER_FORMATS)}")
            continue
        elif key == "signage_convention" and text not in SIGNAGE:
            errors.append(f"signage_convention: must be one of {', '.join(SIGNAGE)}")
            continue
        elif key == "set_balance":
            text = text.strip().lower()
            if text not in SET_BALANCE:
                errors.append(f"set_balance: must be one of {', '.join(SET_BALANCE)}")
                continue
        elif key == "rows_to_skip":
            if not text.strip().isdigit() or int(text) > MAX_ROWS_TO_SKIP:
                errors.append(f"rows_to_skip: must be a whole number from 0 to {MAX_ROWS_TO_SKIP}")
                continue
            text = str(int(text))
        elif key == "col_sep":
            if text not in SEPARATORS and text != "":
                errors.append("col_sep: must be one of ',', ';', tab ('\\t' or 'tab')")
                continue
            text = SEPARATORS.get(text, "")
        merged[key] = text
    if errors:
        raise ValidationFailed(errors)
    return merged
