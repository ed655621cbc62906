"""Reads of accounts, categories, merchants, tags, transfers and rejected transfers."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from core.filters import query_param
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


@dataclass(frozen=True)
class AccountFilters:
    account_type: str | None = query_param("choice", choices=Account.Type.values)
    status: str | None = query_param("choice", choices=Account.Status.values)
    include_disabled: bool | None = query_param(
        "boolean", description="disabled accounts are hidden unless true"
    )


def account_list(*, family: Family, filters: AccountFilters) -> QuerySet[Account]:
    qs = Account.objects.filter(family=family)
    if filters.account_type:
        qs = qs.filter(account_type=filters.account_type)
    if filters.status:
        qs = qs.filter(status=filters.status)  # an explicit status wins over include_disabled
    elif not filters.include_disabled:
        qs = qs.exclude(status=Account.Status.DISABLED)
    return qs.order_by(*NEWEST_FIRST)


@dataclass(frozen=True)
class CategoryFilters:
    parent_id: uuid.UUID | None = query_param("uuid", description="uuid: subcategories of this one")
    roots_only: bool | None = query_param("boolean", description="only top-level categories")


def category_list(*, family: Family, filters: CategoryFilters) -> QuerySet[Category]:
    qs = Category.objects.filter(family=family)
    if filters.parent_id:
        qs = qs.filter(parent_id=filters.parent_id)
    if filters.roots_only:
        qs = qs.filter(parent__isnull=True)
    return qs.order_by(*NEWEST_FIRST)


def merchant_list(*, family: Family) -> QuerySet[Merchant]:
    return Merchant.objects.filter(family=family).order_by(*NEWEST_FIRST)


def tag_list(*, family: Family) -> QuerySet[Tag]:
    return Tag.objects.filter(family=family).order_by(*NEWEST_FIRST)


_LEGS = (
    "inflow_transaction__account",
    "outflow_transaction__account",
)


def transfer_base_queryset(*, family: Family) -> QuerySet[Transfer]:
    return Transfer.objects.filter(family=family).select_related(*_LEGS)


@dataclass(frozen=True)
class RejectedTransferFilters:
    """Both legs' filters: `account_id` matches either leg, the dates the outflow's."""

    account_id: uuid.UUID | None = query_param("uuid", description="uuid; matches either leg")
    start_date: dt.date | None = query_param(
        "date", description="YYYY-MM-DD, on the outflow's date"
    )
    end_date: dt.date | None = query_param(
        "date", not_before="start_date", description="YYYY-MM-DD, on the outflow's date"
    )


@dataclass(frozen=True)
class TransferFilters(RejectedTransferFilters):
    status: str | None = query_param("choice", choices=Transfer.Status.values)


def transfer_list(*, family: Family, filters: TransferFilters) -> QuerySet[Transfer]:
    qs = _legs_filtered(transfer_base_queryset(family=family), filters)
    if filters.status:
        qs = qs.filter(status=filters.status)
    return qs.order_by("-outflow_transaction__date", "-created_at", "-id")


def rejected_transfer_base_queryset(*, family: Family) -> QuerySet[RejectedTransfer]:
    # Both legs must be of the household: a leg of another household makes the row a 404.
    return RejectedTransfer.objects.filter(
        family=family,
        inflow_transaction__family=family,
        outflow_transaction__family=family,
    ).select_related(*_LEGS)


def rejected_transfer_list(
    *, family: Family, filters: RejectedTransferFilters
) -> QuerySet[RejectedTransfer]:
    qs = _legs_filtered(rejected_transfer_base_queryset(family=family), filters)
    return qs.order_by("-outflow_transaction__date", "-created_at", "-id")


def _legs_filtered(qs: QuerySet, filters: RejectedTransferFilters) -> QuerySet:
    """`account_id` matches either leg; dates compare the transfer's date (its outflow's)."""
    account_id, start_date, end_date = filters.account_id, filters.start_date, filters.end_date
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
