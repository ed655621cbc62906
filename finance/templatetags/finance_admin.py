"""Template filters of the household's admin screens."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import template

from finance.money import quantize

register = template.Library()


def flow_text(amount: Decimal, currency: str) -> str:
    """An amount as the household reads it: money out "-12.50", money in "+1,000.00".

    The ledger stores outflows positive (decisions.md); people read spending as negative."""
    value = quantize(amount, currency)
    if value == 0:
        return f"{abs(value):,f}"
    return f"{'-' if value > 0 else '+'}{abs(value):,f}"


@register.filter
def flow(obj: Any) -> str:
    """`{{ transaction|flow }}`: the signed amount with its currency."""
    return f"{flow_text(obj.amount, obj.currency)} {obj.currency}"


@register.filter
def flow_class(obj: Any) -> str:
    return "pf-amount-out" if obj.amount > 0 else "pf-amount-in"


@register.filter
def money(amount: Decimal, currency: str) -> str:
    """`{{ account.balance|money:account.currency }}`: "1,234.56"."""
    return f"{quantize(amount, currency):,f}"


@register.filter
def flow_amount(amount: Decimal | None, currency: str) -> str:
    """`{{ row.amount|flow_amount:"EUR" }}`: a ledger amount signed as people read it."""
    return "" if amount is None else flow_text(amount, currency or "USD")
