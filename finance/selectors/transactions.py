"""Reads of transactions: the filtered, ordered, N+1-free list."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from decimal import Decimal

from django.db import connection
from django.db.models import Count, Prefetch, Q, QuerySet, Window
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from core.filters import query_param
from finance.ledger import SQLITE_MATCH_SQL, TransactionRows, search_index_refresh
from finance.ledger import sqlite_phrase as phrase
from finance.models import Family, Merchant, Transaction, TransactionTag

TRANSACTION_TYPES = ("income", "expense")
TRIGRAM_MIN_CHARS = 3  # shorter terms have no trigram for the index to look up


def text_match(search: str) -> Q:
    """Rows whose name or notes contain `search`, any case: on PostgreSQL each half has its
    trigram index (migrations 0003, 0018; the notes one holds only rows with notes, which
    `UPPER(notes) LIKE` implies)."""
    return Q(name__icontains=search) | Q(notes__icontains=search)


def transaction_base_queryset(*, family: Family) -> QuerySet[Transaction]:
    # The transfer legs come by prefetch, for the page's rows only: joined into the page query
    # they made PostgreSQL plan the join before the sort, and at times hash the whole
    # transactions table to reach the other legs (a small household's page slower than a
    # large one's: bench/README.md).
    return (
        Transaction.objects.filter(family=family)
        .select_related("account", "category", "merchant")
        .prefetch_related(
            Prefetch("tags", to_attr=Transaction.PREFETCHED_TAGS),
            "transfer_as_inflow__outflow_transaction__account",
            "transfer_as_outflow__inflow_transaction__account",
        )
    )


@dataclass(frozen=True)
class TransactionFilters:
    account_id: uuid.UUID | None = query_param("uuid", description="uuid")
    account_ids: tuple[uuid.UUID, ...] = query_param("uuid_list")
    category_id: uuid.UUID | None = query_param("uuid", description="uuid")
    merchant_id: uuid.UUID | None = query_param("uuid", description="uuid")
    tag_ids: tuple[uuid.UUID, ...] = query_param("uuid_list")
    start_date: dt.date | None = query_param("date", description="YYYY-MM-DD, inclusive")
    end_date: dt.date | None = query_param(
        "date", not_before="start_date", description="YYYY-MM-DD, inclusive"
    )
    min_amount: Decimal | None = query_param(
        "decimal", description="ledger-signed amount, inclusive"
    )
    max_amount: Decimal | None = query_param(
        "decimal", description="ledger-signed amount, inclusive"
    )
    type: str | None = query_param("choice", choices=TRANSACTION_TYPES)
    pending: bool | None = query_param("boolean")
    search: str | None = query_param("text", description="name, notes and merchant name")


def transaction_list(*, family: Family, filters: TransactionFilters) -> QuerySet[Transaction]:
    account_id, account_ids = filters.account_id, filters.account_ids
    category_id, merchant_id = filters.category_id, filters.merchant_id
    tag_ids = list(dict.fromkeys(filters.tag_ids))
    start_date, end_date = filters.start_date, filters.end_date
    min_amount, max_amount = filters.min_amount, filters.max_amount
    kind, pending, search = filters.type, filters.pending, filters.search

    qs = transaction_base_queryset(family=family)
    # The household's links to the tags asked for, with their transactions' dates (kept by
    # triggers, finance/tag_dates.py): one index gives their order and their count.
    tag_links = TransactionTag.objects.filter(family=family, tag_id__in=tag_ids)
    order = ["-date", "-created_at", "-id"]
    if len(tag_ids) == 1:
        # A transaction has a tag once: join its link and take the page in the link's order.
        qs = qs.filter(tag_links__family=family, tag_links__tag_id=tag_ids[0])
        order[0] = "-tag_links__date"
    elif tag_ids:  # any of several: each transaction once
        qs = qs.filter(pk__in=tag_links.values("transaction_id"))
    if account_id:
        qs = qs.filter(account_id=account_id)
    if account_ids:
        qs = qs.filter(account_id__in=account_ids)
    if category_id:
        qs = qs.filter(category_id=category_id)
    if merchant_id:
        qs = qs.filter(merchant_id=merchant_id)
    if start_date:
        qs = qs.filter(date__gte=start_date)
    if end_date:
        qs = qs.filter(date__lte=end_date)
    if min_amount is not None:
        qs = qs.filter(amount__gte=min_amount)
    if max_amount is not None:
        qs = qs.filter(amount__lte=max_amount)
    if kind == "income":
        qs = qs.filter(amount__lt=0)
    elif kind == "expense":
        qs = qs.filter(amount__gte=0)
    if pending is not None:
        qs = qs.filter(pending=pending)
    if search:
        # All conditions on the transaction row itself, so PostgreSQL can combine its trigram
        # indexes (migration 0003) and the merchant index instead of scanning. The matching
        # merchants (a household has dozens) are looked up first: as a subquery the planner
        # guesses half the ledger matches and walks the whole date index.
        merchants = list(
            Merchant.objects.filter(family=family, name__icontains=search).values_list(
                "id", flat=True
            )
        )
        indexed = len(search) >= TRIGRAM_MIN_CHARS and (
            connection.vendor == "postgresql" or search_index_refresh(connection)
        )
        if indexed and connection.vendor == "sqlite":
            # SQLite's FTS5 index (finance/search_sqlite.py); the phrase is a bound parameter.
            condition = Q(pk__in=RawSQL(SQLITE_MATCH_SQL, (phrase(search),)))  # noqa: S611
        else:
            condition = text_match(search)
        if merchants:
            condition |= Q(merchant_id__in=merchants)
        qs = qs.filter(condition)
        if indexed:
            # Sort the index's matches instead of walking the date index until a page of
            # them turns up: the planner cannot tell a rare term (long to walk to, quick to
            # sort) from a common one, and the exact count already
            # reads every match. The expression only hides the index; the order is the same.
            # The exact count comes with the page (a window over the matches, narrow rows
            # without the joins), so the matches are read once, not again by a COUNT(*).
            qs = qs.order_by(Coalesce("date", "date").desc(), "-created_at", "-id")
            keys = qs.select_related(None).prefetch_related(None)
            keys = keys.annotate(window_total=Window(Count("*")))
            return qs.paged_by(keys, rows=transaction_base_queryset(family=family))
    qs = qs.order_by(*order)
    others = (category_id, merchant_id, start_date, end_date, search)
    if any(others) or (min_amount, max_amount, pending) != (None,) * 3:
        return qs
    if not tag_ids:
        # Only accounts and type: the counters kept by triggers give the exact count.
        accounts = {account_id} if account_id else None
        if account_ids:  # both given: the accounts in both
            accounts = set(account_ids) if accounts is None else accounts & set(account_ids)
        expense = None if kind is None else kind == "expense"
        rows = TransactionRows(family_id=family.pk, accounts=accounts, expense=expense, fallback=qs)
        return qs.counted_by(rows)
    if tag_ids and not (account_id or account_ids or kind):
        # Only the tags filter: the household's links are the rows, so the exact count reads
        # their index instead of joining each link back to its transaction.
        if len(tag_ids) > 1:
            tag_links = tag_links.values("transaction_id").distinct()
        qs = qs.counted_by(tag_links)
    return qs
