"""Template filters of the household's admin screens: the one money format (grouped digits, the
currency's decimals, the code after the number), quantities, statuses and data in words."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django import template
from django.utils.dateparse import parse_datetime
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.timezone import localtime

from finance.labels import NONE, label_for, status_class
from finance.money import quantize

register = template.Library()


def flow_text(amount: Decimal, currency: str) -> str:
    """An amount as the household reads it: money out "-12.50", money in "+1,000.00".

    The ledger stores outflows positive (decisions.md); people read spending as negative."""
    value = quantize(amount, currency)
    if value == 0:
        return f"{abs(value):,f}"
    return f"{'-' if value > 0 else '+'}{abs(value):,f}"


def money_text(amount: Decimal | None, currency: str) -> str:
    """ "1,234.56 USD", "-310.00 USD": a balance or value, signed as stored."""
    if amount is None:
        return NONE
    value = quantize(Decimal(amount), currency)
    if value == 0:
        value = abs(value)
    return f"{value:,f} {currency}"


@register.filter
def flow(obj: Any) -> str:
    """`{{ transaction|flow }}`: the signed amount with its currency."""
    return f"{flow_text(obj.amount, obj.currency)} {obj.currency}"


@register.filter
def flow_class(obj: Any) -> str:
    return "pf-amount-out" if obj.amount > 0 else "pf-amount-in"


@register.filter
def money(amount: Decimal | None, currency: str) -> str:
    """`{{ account.balance|money:account.currency }}`: "1,234.56 USD"."""
    return money_text(amount, currency)


@register.filter
def flow_amount(amount: Decimal | None, currency: str) -> str:
    """`{{ row.amount|flow_amount:"EUR" }}`: a ledger amount signed as people read it."""
    return "" if amount is None else f"{flow_text(amount, currency or 'USD')} {currency or ''}"


@register.filter
def quantity(value: Decimal | None) -> str:
    """`6.00000000` -> "6", `1234.5000` -> "1,234.5"."""
    if value is None:
        return NONE
    normal = Decimal(value).normalize()
    if normal == normal.to_integral():
        normal = normal.quantize(Decimal(1))
    return f"{normal:,f}"


@register.filter
def when(value: Any) -> str:
    """A date or time in the site's one format; ISO text is parsed first."""
    if value in (None, ""):
        return ""
    if isinstance(value, str):
        parsed = parse_datetime(value)
        if parsed is None:
            try:
                return date_format(dt.date.fromisoformat(value[:10]))
            except ValueError:
                return value
        value = parsed
    if isinstance(value, dt.datetime):
        return date_format(localtime(value) if value.tzinfo else value, "DATETIME_FORMAT")
    return date_format(value)


@register.filter
def label(value: Any, kind: str = "") -> str:
    """`{{ sync.status|label:"sync" }}`: a stored code in words."""
    return label_for(kind, value)


@register.filter
def badge(value: Any, kind: str = "") -> SafeString:
    """`{{ sync.status|badge:"sync" }}`: the status as a coloured badge, in words."""
    return format_html(
        '<span class="pf-badge pf-status-{}">{}</span>', status_class(value), label_for(kind, value)
    )


@register.filter
def as_list(data: Any) -> SafeString:
    """A stored JSON object as a definition list (keys in words, nested objects indented)."""
    return definition_list(data)


def definition_list(data: Any) -> SafeString:
    if not data:
        return format_html('<span class="pf-muted">{}</span>', NONE)
    if isinstance(data, list):
        if all(not isinstance(item, dict | list) for item in data):
            return format_html("{}", ", ".join(str(item) for item in data))
        return format_html_join("", "{}", ((definition_list(item),) for item in data))
    if not isinstance(data, dict):
        return format_html("{}", data)
    rows = format_html_join(
        "",
        "<dt>{}</dt><dd>{}</dd>",
        (
            (label_for("key", key), definition_list(value) if isinstance(value, dict | list)
             else label_for("value", value))
            for key, value in data.items()
        ),
    )  # fmt: skip
    return format_html('<dl class="pf-dl">{}</dl>', rows)
