"""Transfer candidates found by the database: one self-join of the touched legs against the
household's other free legs, instead of reading every leg of the date range into Python (a
first sync read each earlier account's rows again at every account's close; on SQLite a
100,000-row first sync spent 3.2 of its 15.7 s reading them).

The rules are transfer_matching's: opposite amounts in the same currency, different accounts,
dates at most `max_days` apart, neither leg in a transfer, the pair never rejected; the caller
orders and chooses. "In no transfer" is written as two NOT EXISTS (anti-joins), not as the
ORM's LEFT JOIN ... IS NULL: the planner estimated that at one row in thousands and joined the
legs by a nested loop (10 s for 5,000 legs against 15,000). The other legs are first cut to the
amounts a touched leg could pair with (a hash semi-join: exactly what the join's own
`i.amount = -o.amount` keeps), so the in-no-transfer checks run on those alone, not on every
leg of the date range: a 100,000-row first sync's 20 searches, 4.1 -> 2.9 s (one run each).

Both databases run the same joins: PostgreSQL in one statement over two CTEs, SQLite over
two temporary tables indexed by amount (`_staged_pairs`); the rest of what differs is spelled
by `_DIALECT`. On SQLite an amount is the canonical text of its column's places
(core/exact.py: equal values are equal texts, zero has no sign), so its opposite is the same
text with the sign flipped and its sign is its first character; a date is ISO text, days apart
by `julianday`. Every leg given here is non-zero (the caller's querysets exclude zero
amounts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from core.planner import hash_joins
from finance.models import RejectedTransfer, Transfer

_NAMES = ("id", "account_id", "account_type", "date", "amount", "currency", "created_at")

# vendor -> (the opposite of amount {x}, {x} > 0, days between dates {a} and {b})
_DIALECT = {
    "postgresql": ("-{x}", "{x} > 0", "abs({a} - {b})"),
    "sqlite": (
        "(CASE WHEN substr({x}, 1, 1) = '-' THEN substr({x}, 2) ELSE '-' || {x} END)",
        "substr({x}, 1, 1) <> '-'",
        "abs(julianday({a}) - julianday({b}))",
    ),
}


# SQLite: the two sets' temporary tables (the connection's own, dropped after each search).
_STAGED = ("_pairs_touched", "_pairs_others")


def pair_candidates(
    touched: QuerySet[Any], others: QuerySet[Any], columns: Sequence[str], max_days: int
) -> list[tuple[tuple, tuple]]:
    """(outflow, inflow) pairs of legs in no transfer, each leg as a tuple of `columns` (seven,
    in the order of `_NAMES`, as the ORM reads them), with at least one leg among `touched`;
    the other among `others` (which may hold the touched legs too: a pair of two touched legs
    is found once). Legs of zero amount must not be among them."""
    if len(columns) != len(_NAMES):
        raise ValueError("pair_candidates reads seven columns")
    reads = touched.order_by().values_list(*columns).query.get_compiler(connection=connection)
    t_sql, t_params = reads.as_sql()
    c_sql, c_params = others.order_by().values_list(*columns).query.sql_with_params()
    neg, positive, apart = _DIALECT[connection.vendor]
    qn = connection.ops.quote_name
    names = ", ".join(_NAMES)
    picked = ", ".join([f"o.{n} AS o_{n}" for n in _NAMES] + [f"i.{n} AS i_{n}" for n in _NAMES])
    match = (
        f"i.amount = {neg.format(x='o.amount')} AND i.currency = o.currency "
        f"AND i.account_id <> o.account_id AND {apart.format(a='i.date', b='o.date')} <= %s"
    )
    outflow = positive.format(x="o.amount")
    rejected = qn(RejectedTransfer._meta.db_table)
    transfers = qn(Transfer._meta.db_table)
    free = (
        f"NOT EXISTS (SELECT 1 FROM {transfers} AS x WHERE x.inflow_transaction_id = s.id) "  # noqa: S608
        f"AND NOT EXISTS (SELECT 1 FROM {transfers} AS x WHERE x.outflow_transaction_id = s.id)"
    )
    # Both the touched legs and the others come from the ORM's own SQL (no input in the text).
    touched_sql = f"SELECT * FROM ({t_sql}) AS s WHERE {free}"  # noqa: S608

    def others_sql(t: str) -> str:
        return (
            f"SELECT * FROM ({c_sql}) AS s "  # noqa: S608
            f"WHERE s.amount IN (SELECT {neg.format(x='l.amount')} FROM {t} AS l) AND {free}"
        )

    def pairs_sql(t: str, c: str) -> str:
        return (
            f"SELECT * FROM ("  # noqa: S608
            f"SELECT {picked} FROM {t} AS o JOIN {c} AS i ON {match} WHERE {outflow} "
            f"UNION SELECT {picked} FROM {c} AS o JOIN {t} AS i ON {match} WHERE {outflow}"
            f") AS p WHERE NOT EXISTS (SELECT 1 FROM {rejected} AS r "
            "WHERE r.outflow_transaction_id = p.o_id AND r.inflow_transaction_id = p.i_id)"
        )

    width = len(_NAMES)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            t_table, c_table = _STAGED
            rows = _staged_pairs(
                cursor,
                [(touched_sql, t_params), (others_sql(t_table), c_params)],
                pairs_sql(t_table, c_table),
                max_days,
            )
        else:
            with hash_joins(cursor):
                # The sets are joined by hash or merge on the amount, never by a nested loop
                # (core/planner.py: a table grown since its last ANALYZE looked like a handful
                # of rows).
                cursor.execute(
                    f"WITH t ({names}) AS ({touched_sql}), c ({names}) AS ({others_sql('t')}) "
                    + pairs_sql("t", "c"),
                    [*t_params, *c_params, max_days, max_days],
                )
                rows = cursor.fetchall()
    legs = [row[:width] for row in rows] + [row[width:] for row in rows]
    # Each leg through its fields' converters, as the ORM's own read would give it (on SQLite
    # they turn the texts back into ids, dates, amounts and times).
    converters = reads.get_converters([expr for expr, _, _ in reads.select])
    if converters:
        legs = [tuple(leg) for leg in reads.apply_converters(legs, converters)]
    return list(zip(legs[: len(rows)], legs[len(rows) :], strict=True))


def _staged_pairs(
    cursor: Any, sets: list[tuple[str, Sequence[Any]]], pairs_sql: str, max_days: int
) -> list[tuple]:
    """SQLite: the touched legs and the others staged in temporary tables, indexed by amount
    once filled, then joined; the tables are dropped after. As two CTEs, SQLite's planner built
    an automatic index on the first only and scanned the others once per touched leg: a first
    sync of 40,000 rows spent 7.7 s in this search, staged 0.12 s."""
    names = ", ".join(_NAMES)
    try:
        for table, (sql, params) in zip(_STAGED, sets, strict=True):
            cursor.execute(f"CREATE TEMP TABLE {table} ({names})")
            cursor.execute(f"INSERT INTO temp.{table} {sql}", params)
            cursor.execute(f"CREATE INDEX temp.{table}_key ON {table} (amount, currency)")
        cursor.execute(pairs_sql, [max_days, max_days])
        return cursor.fetchall()
    finally:
        for table in _STAGED:
            cursor.execute(f"DROP TABLE IF EXISTS temp.{table}")


def legs_by_amount(legs: QuerySet[Any], amounts: Sequence[Any]) -> list[tuple]:
    """The rows of `legs` (a `values_list` of transactions) whose amount is one of `amounts`,
    found by one probe of the (household, amount) index per amount.

    Given the amounts as one list, both planners read the household's whole date range
    instead (the date index): PostgreSQL estimated thousands of matches for a bulk's 1,000
    amounts, SQLite preferred the range. At 100,000 rows that was 45-62 ms a bulk request on
    PostgreSQL and 82-123 ms on SQLite, growing with the household, for none found.
    PostgreSQL: the amounts are a LATERAL join over `unnest` (OFFSET 0 keeps it a nested
    loop); SQLite: the list, with the index named (`INDEXED BY`)."""
    if not amounts:
        return []
    pg = connection.vendor == "postgresql"
    # PostgreSQL wraps the rows' own query; SQLite filters it by the list, the index named.
    query = (legs if pg else legs.filter(amount__any=list(amounts))).order_by().query
    compiler = query.get_compiler(connection=connection)
    sql, params = compiler.as_sql()  # the ORM's own SQL: no input in the text
    if pg:
        sql = (
            "SELECT s.* FROM unnest(%s::numeric[]) AS w (amount) CROSS JOIN LATERAL "  # noqa: S608
            f"(SELECT * FROM ({sql}) AS b WHERE b.amount = w.amount OFFSET 0) AS s"
        )
        params = [list(amounts), *params]
    else:
        table = connection.ops.quote_name(legs.model._meta.db_table)
        sql = sql.replace(f"FROM {table}", f"FROM {table} INDEXED BY {_BY_AMOUNT}", 1)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    converters = compiler.get_converters([expr for expr, _, _ in compiler.select])
    if converters:
        rows = [tuple(row) for row in compiler.apply_converters(rows, converters)]
    return rows


_BY_AMOUNT = "txn_family_amount"  # finance/models/ledger.py: Transaction's (family, amount)
