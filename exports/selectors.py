"""Reads of exports and restores, and the one statement of what a household's archive holds:
each kind's rows (an export writes them, a restore's readback counts them again)."""

from __future__ import annotations

import uuid

from django.db.models import Prefetch, Q, QuerySet

from exports.models import Export, Restore
from finance.models import (
    Account,
    Category,
    ExchangeRate,
    Family,
    Merchant,
    RejectedTransfer,
    Rule,
    Tag,
    Transaction,
    Transfer,
)
from providers.models import ProviderAccount, ProviderConnection
from trades.models import Holding, Security, SecurityPrice, Trade

# The archive's JSON Lines files, in the order a restore reads them (references first).
KINDS = (
    "accounts",
    "categories",
    "merchants",
    "tags",
    "securities",
    "rules",
    "transactions",
    "transfers",
    "rejected_transfers",
    "trades",
    "holdings",
    "security_prices",
    "exchange_rates",
    "provider_connections",
)


def household_securities(*, family: Family) -> QuerySet[Security]:
    """The household's own securities and the shared ones its trades, holdings or prices use."""
    used = (
        Q(family=family)
        | Q(trades__family=family)
        | Q(holdings__family=family)
        | Q(prices__family=family)
    )
    ids = Security.objects.filter(used).values("pk")
    return Security.objects.filter(pk__in=ids)


def archive_querysets(*, family: Family) -> dict[str, QuerySet]:
    """Each kind's rows of the household, with what its API representation reads (the
    export's reads and the restore's readback counts)."""
    return {
        "accounts": Account.objects.filter(family=family).order_by("created_at", "id"),
        "categories": Category.objects.filter(family=family).order_by("created_at", "id"),
        "merchants": Merchant.objects.filter(family=family).order_by("created_at", "id"),
        "tags": Tag.objects.filter(family=family).order_by("created_at", "id"),
        "securities": household_securities(family=family).order_by("created_at", "id"),
        "rules": Rule.objects.filter(family=family).order_by("position", "created_at", "id"),
        # read as plain values by exports/rows.py (this one counts them)
        "transactions": Transaction.objects.filter(family=family).order_by(
            "date", "created_at", "id"
        ),
        "transfers": Transfer.objects.filter(family=family)
        .select_related("inflow_transaction__account", "outflow_transaction__account")
        .order_by("created_at", "id"),
        "rejected_transfers": RejectedTransfer.objects.filter(family=family)
        .select_related("inflow_transaction__account", "outflow_transaction__account")
        .order_by("created_at", "id"),
        "trades": Trade.objects.filter(family=family)
        .select_related("account", "security", "category")
        .order_by("date", "created_at", "id"),
        "holdings": Holding.objects.filter(family=family)
        .select_related("account", "security")
        .order_by("created_at", "id"),
        "security_prices": SecurityPrice.objects.filter(family=family)
        .select_related("security")
        .order_by("date", "created_at", "id"),
        "exchange_rates": ExchangeRate.objects.filter(family=family).order_by("date", "id"),
        "provider_connections": ProviderConnection.objects.filter(family=family)
        .prefetch_related(
            Prefetch("accounts", queryset=ProviderAccount.objects.order_by("created_at", "id"))
        )
        .order_by("created_at", "id"),
    }


def export_get(*, family: Family, export_id: uuid.UUID) -> Export | None:
    return Export.objects.filter(family=family, pk=export_id).first()


def export_list(*, family: Family | None) -> QuerySet[Export]:
    """A household's exports, newest first (None: every household's, for staff)."""
    qs = Export.objects.select_related("family")
    return qs if family is None else qs.filter(family=family)


def restore_get(*, family: Family, restore_id: uuid.UUID) -> Restore | None:
    return Restore.objects.filter(family=family, pk=restore_id).first()
