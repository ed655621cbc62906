"""Reads of accounts, categories, merchants, tags, transfers and rejected transfers."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from core.filters import QueryFilters
from finance.models import (
    Account,
    Category,
    Family,
    Merchant,
    RejectedTransfer,
    Tag,
    Transfer,
)

NEWEST_FIRST = ("-created_at", "-id")


def account_list(*, family: Family, params: Any) -> QuerySet[Account]:
    f = QueryFilters(params)
    account_type = f.choice("account_type", Account.Type.values)
    status = f.choice("status", Account.Status.values)
    include_disabled = f.boolean("include_disabled")
    f.check()
    qs = Account.objects.filter(family=family)
    if account_type:
        qs = qs.filter(account_type=account_type)
    if status:
        qs = qs.filter(status=status)  # an explicit status wins over include_disabled
    elif not include_disabled:
        qs = qs.exclude(status=Account.Status.DISABLED)
    return qs.order_by(*NEWEST_FIRST)


def category_list(*, family: Family, params: Any) -> QuerySet[Category]:
    f = QueryFilters(params)
    parent_id = f.uuid("parent_id")
    roots_only = f.boolean("roots_only")
    f.check()
    qs = Category.objects.filter(family=family)
    if parent_id:
        qs = qs.filter(parent_id=parent_id)
    if roots_only:
        qs = qs.filter(parent__isnull=True)
    return qs.order_by(*NEWEST_FIRST)


def merchant_list(*, family: Family, params: Any) -> QuerySet[Merchant]:
    QueryFilters(params).check()
    return Merchant.objects.filter(family=family).order_by(*NEWEST_FIRST)


def tag_list(*, family: Family, params: Any) -> QuerySet[Tag]:
    QueryFilters(params).check()
    return Tag.objects.filter(family=family).order_by(*NEWEST_FIRST)


_LEGS = (
    "inflow_transaction__account",
    "outflow_transaction__account",
)


def transfer_base_queryset(*, family: Family) -> QuerySet[Transfer]:
    return Transfer.objects.filter(family=family).select_related(*_LEGS)


def transfer_list(*, family: Family, params: Any) -> QuerySet[Transfer]:
    f = QueryFilters(params)
    account_id = f.uuid("account_id")
    status = f.choice("status", Transfer.Status.values)
    start_date, end_date = f.date_range()
    f.check()
    qs = transfer_base_queryset(family=family)
    qs = _legs_filtered(qs, account_id, start_date, end_date)
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("-outflow_transaction__date", "-created_at", "-id")


def rejected_transfer_base_queryset(*, family: Family) -> QuerySet[RejectedTransfer]:
    # Both legs must be of the household: a leg of another household makes the row a 404.
    return RejectedTransfer.objects.filter(
        family=family,
        inflow_transaction__family=family,
        outflow_transaction__family=family,
    ).select_related(*_LEGS)


def rejected_transfer_list(*, family: Family, params: Any) -> QuerySet[RejectedTransfer]:
    f = QueryFilters(params)
    account_id = f.uuid("account_id")
    start_date, end_date = f.date_range()
    f.check()
    qs = rejected_transfer_base_queryset(family=family)
    qs = _legs_filtered(qs, account_id, start_date, end_date)
    return qs.order_by("-outflow_transaction__date", "-created_at", "-id")


def _legs_filtered(qs: QuerySet, account_id: Any, start_date: Any, end_date: Any) -> QuerySet:
    """`account_id` matches either leg; dates compare the transfer's date (its outflow's)."""
    if account_id:
        qs = qs.filter(
            Q(inflow_transaction__account_id=account_id)
            | Q(outflow_transaction__account_id=account_id)
        )
    if start_date:
        qs = qs.filter(outflow_transaction__date__gte=start_date)
    if end_date:
        qs = qs.filter(outflow_transaction__date__lte=end_date)
    return qs
