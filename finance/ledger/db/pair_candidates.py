"""Transfer candidates found by the database (PostgreSQL): one self-join of the touched legs
against the household's other free legs, instead of reading every leg of the date range into
Python (a first sync read each earlier account's rows again at every account's close).

The rules are transfer_matching's: opposite amounts in the same currency, different accounts,
dates at most `max_days` apart, neither leg in a transfer, the pair never rejected; the caller
orders and chooses. "In no transfer" is written as two NOT EXISTS (anti-joins), not as the
ORM's LEFT JOIN ... IS NULL: the planner estimated that at one row in thousands and joined the
legs by a nested loop (10 s for 5,000 legs against 15,000). The other legs are first cut to the
amounts a touched leg could pair with (a hash semi-join: exactly what the join's own
`i.amount = -o.amount` keeps), so the in-no-transfer checks run on those alone, not on every
leg of the date range: a 100,000-row first sync's 20 searches, 4.1 -> 2.9 s (one run each)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from core.planner import hash_joins
from finance.models import RejectedTransfer, Transfer

_NAMES = ("id", "account_id", "account_type", "date", "amount", "currency", "created_at")


def pair_candidates(
    touched: QuerySet[Any], others: QuerySet[Any], columns: Sequence[str], max_days: int
) -> list[tuple[tuple, tuple]]:
    """(outflow, inflow) pairs of legs in no transfer, each leg as a tuple of `columns` (seven,
    in the order of `_NAMES`), with at least one leg among `touched`; the other among
    `others` (which may hold the touched legs too: a pair of two touched legs is found
    once)."""
    if len(columns) != len(_NAMES):
        raise ValueError("pair_candidates reads seven columns")
    t_sql, t_params = touched.order_by().values_list(*columns).query.sql_with_params()
    c_sql, c_params = others.order_by().values_list(*columns).query.sql_with_params()
    qn = connection.ops.quote_name
    names = ", ".join(_NAMES)
    picked = ", ".join([f"o.{n} AS o_{n}" for n in _NAMES] + [f"i.{n} AS i_{n}" for n in _NAMES])
    match = (
        "i.amount = -o.amount AND i.currency = o.currency "
        "AND i.account_id <> o.account_id AND abs(i.date - o.date) <= %s"
    )
    rejected = qn(RejectedTransfer._meta.db_table)
    transfers = qn(Transfer._meta.db_table)
    free = (
        f"NOT EXISTS (SELECT 1 FROM {transfers} AS x WHERE x.inflow_transaction_id = s.id) "  # noqa: S608
        f"AND NOT EXISTS (SELECT 1 FROM {transfers} AS x WHERE x.outflow_transaction_id = s.id)"
    )
    # Both the touched legs and the others come from the ORM's own SQL (no input in the text).
    sql = (
        f"WITH t AS (SELECT * FROM ({t_sql}) AS s ({names}) WHERE {free}), "  # noqa: S608
        f"c AS (SELECT * FROM ({c_sql}) AS s ({names}) "
        f"WHERE s.amount IN (SELECT -t.amount FROM t) AND {free}) "
        f"SELECT * FROM ("
        f"SELECT {picked} FROM t AS o JOIN c AS i ON {match} WHERE o.amount > 0 "
        f"UNION SELECT {picked} FROM c AS o JOIN t AS i ON {match} WHERE o.amount > 0"
        f") AS p WHERE NOT EXISTS (SELECT 1 FROM {rejected} AS r "
        "WHERE r.outflow_transaction_id = p.o_id AND r.inflow_transaction_id = p.i_id)"
    )
    width = len(_NAMES)
    with connection.cursor() as cursor, hash_joins(cursor):
        # The sets are joined by hash or merge on the amount, never by a nested loop
        # (core/planner.py: a table grown since its last ANALYZE looked like a handful of rows).
        cursor.execute(sql, [*t_params, *c_params, max_days, max_days])
        return [(row[:width], row[width:]) for row in cursor.fetchall()]
