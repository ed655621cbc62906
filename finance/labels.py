"""Stored codes in words, for the household's screens: statuses, kinds, choices, the keys of
stored configurations. A code without an entry reads as its words ("dry_run" -> "Dry run")."""

from __future__ import annotations

from typing import Any

from django.utils.translation import ngettext

WORDS: dict[str, dict[str, str]] = {
    "kind": {
        "standard": "Standard",
        "funds_movement": "Transfer between own accounts",
        "cc_payment": "Credit card payment",
        "loan_payment": "Loan payment",
        "one_time": "One-time",
        "investment_contribution": "Investment contribution",
    },
    "readback": {
        "not_verified": "Not verified yet",
        "verified": "Verified",
        "matched": "Matched",
        "mismatch": "Does not match",
        "failed": "Check failed",
    },
    "import": {
        "pending": "Ready to publish",
        "importing": "Publishing",
        "complete": "Published",
        "failed": "Failed",
        "reverting": "Reverting",
        "revert_failed": "Revert failed",
    },
    "sync": {
        "pending": "Waiting",
        "syncing": "Syncing",
        "running": "Syncing",
        "completed": "Completed",
        "failed": "Failed",
    },
    "key": {
        "date_col_label": "Date column",
        "amount_col_label": "Amount column",
        "name_col_label": "Name column",
        "category_col_label": "Category column",
        "tags_col_label": "Tags column",
        "notes_col_label": "Notes column",
        "account_col_label": "Account column",
        "currency_col_label": "Currency column",
        "col_sep": "Separator",
        "rows_to_skip": "Rows to skip",
        "set_balance": "Take the statement's balance",
        "signage_convention": "Signs",
        "number_format": "Number format",
        "date_format": "Date format",
    },
    "value": {
        "inflows_positive": "money in is positive",
        "inflows_negative": "money in is negative",
        "auto": "automatic",
        ",": "comma",
        ";": "semicolon",
        "tab": "tab",
        "true": "yes",
        "false": "no",
        "True": "yes",
        "False": "no",
    },
}
# strftime codes as the dates they read: "%d/%m/%Y" -> "31/12/2024"
DATE_EXAMPLE = {"%Y": "2024", "%y": "24", "%m": "12", "%d": "31", "%b": "Dec"}

NONE = "\u2013"  # an en dash: no value

GOOD = {"completed", "complete", "good", "matched", "verified", "confirmed", "active"}
BAD = {"failed", "error", "revert_failed", "mismatch", "requires_update", "disabled"}
BUSY = {"syncing", "running", "importing", "reverting", "pending"}


def date_example(fmt: str) -> str:
    out = fmt
    for code, text in DATE_EXAMPLE.items():
        out = out.replace(code, text)
    return out


def label_for(kind: str, value: Any) -> str:
    if value is None or value == "":
        return "" if kind != "readback" else WORDS["readback"]["not_verified"]
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value)
    words = WORDS.get(kind, {}).get(text)
    if words is not None:
        return words
    if kind == "value" and text.startswith("%"):
        return date_example(text)
    if kind == "value":
        return text
    return text.replace("_", " ").capitalize()


def status_class(value: Any) -> str:
    text = str(value or "")
    if text in GOOD:
        return "good"
    if text in BAD:
        return "failed"
    if text in BUSY:
        return "syncing"
    return "muted"


CONNECTION_WORDS = {
    "good": "Good",
    "requires_update": "Needs reconnecting",
    "error": "Error",
    "failed": "Last sync failed",
    "syncing": "Syncing",
}


def connection_health(connection: Any, last_sync: Any) -> tuple[str, str]:
    """The connection's badge: (css status, words). The connection's own state first (it needs
    the household), then its last sync's: a connection whose last sync failed is not "Good"."""
    status = str(connection.status)
    if status != "good":
        return status, CONNECTION_WORDS.get(status, label_for("", status))
    if last_sync is not None and last_sync.status == "failed":
        return "failed", CONNECTION_WORDS["failed"]
    if last_sync is not None and last_sync.status in ("pending", "syncing"):
        return "syncing", CONNECTION_WORDS["syncing"]
    return "good", CONNECTION_WORDS["good"]


def counted(count: int, singular: str, plural: str) -> str:
    """ "1 account", "3 accounts"."""
    return f"{count} {ngettext(singular, plural, count)}"
