"""`ledger_check`: re-derive everything the ledger keeps beside its rows and report (or
repair) what differs: each account's balance series, balance and holdings value, transfer
suggestions, the row counters and (SQLite) the search index.

The derivation runs inside a savepoint; without `fix` it is rolled back, so a check never
changes anything. Series are compared by meaning (the balance on every day either series
names), so a series stored one row per day by an older version matches its sparse form."""

from __future__ import annotations

import bisect
import datetime as dt
import uuid
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import connection, transaction
from django.db.models import Count, Q, Sum

from finance.ledger.batch import ledger_batch
from finance.ledger.db import row_counts, search_sqlite
from finance.models import Account, AccountBalance, Family, Transaction, TransactionCount, Transfer


@dataclass
class CheckReport:
    family: str
    problems: list[str] = field(default_factory=list)
    fixed: bool = False


class _Rollback(Exception):
    pass


def _series(account_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[tuple[dt.date, Decimal]]]:
    out: dict[uuid.UUID, list[tuple[dt.date, Decimal]]] = {pk: [] for pk in account_ids}
    rows = AccountBalance.objects.filter(account_id__in=account_ids).order_by("account_id", "date")
    for account_id, day, balance in rows.values_list("account_id", "date", "balance"):
        out[account_id].append((day, balance))
    return out


def _value_at(series: list[tuple[dt.date, Decimal]], day: dt.date) -> Decimal | None:
    if not series:
        return None
    i = bisect.bisect_right([d for d, _ in series], day) - 1
    return series[max(i, 0)][1]


def _series_differences(
    before: list[tuple[dt.date, Decimal]], after: list[tuple[dt.date, Decimal]]
) -> list[dt.date]:
    days = sorted({d for d, _ in before} | {d for d, _ in after})
    return [d for d in days if _value_at(before, d) != _value_at(after, d)]


def _counter_problems(family: Family) -> list[str]:
    actual = {
        (row["account_id"], row["expense"]): row["n"]
        for row in Transaction.objects.filter(family=family)
        .annotate(expense=Q(amount__gte=0))
        .values("account_id", "expense")
        .annotate(n=Count("pk"))
        .order_by()
    }
    kept = {
        (row["account_id"], row["expense"]): row["n"]
        for row in TransactionCount.objects.filter(family=family)
        .values("account_id", "expense")
        .annotate(n=Sum("row_count"))
        .order_by()
    }
    keys = {k for k in actual.keys() | kept.keys() if actual.get(k, 0) != (kept.get(k) or 0)}
    return [f"row counters of {len(keys)} account/sign key(s) differ from the rows"] if keys else []


def _search_problems() -> list[str]:
    if connection.vendor != "sqlite" or not search_sqlite.search_index_ready(connection):
        return []
    search_sqlite.search_index_catch_up(connection)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT count(*) FROM {search_sqlite.MAP}),"  # noqa: S608
            f" (SELECT count(*) FROM {search_sqlite.TABLE}),"
            f" (SELECT count(*) FROM {search_sqlite.FTS})"
        )
        mapped, rows, indexed = cursor.fetchone()
    if mapped != rows:
        return [f"the search index maps {mapped} rows of {rows}"]
    return [f"the search index holds {indexed} rows of {rows}"] if indexed != rows else []


def ledger_check(*, family: Family, fix: bool = False) -> CheckReport:
    """Check one household (and, with `fix`, repair it)."""
    report = CheckReport(family=family.name)
    accounts = list(Account.objects.filter(family=family).order_by("name", "pk"))
    ids = [a.pk for a in accounts]
    before = _series(ids)
    balances = {a.pk: (a.balance, a.holdings_value) for a in accounts}
    transfers = Transfer.objects.filter(family=family)
    transfers_before = set(transfers.values_list("pk", flat=True))
    try:
        with transaction.atomic():
            with ledger_batch(family=family) as batch:
                for account in accounts:
                    batch.touch(family, account.pk, None)
            after = _series(ids)
            derived = Account.objects.filter(pk__in=ids).values_list(
                "pk", "balance", "holdings_value"
            )
            balances_after = {pk: (balance, holdings) for pk, balance, holdings in derived}
            for account in accounts:
                days = _series_differences(before[account.pk], after[account.pk])
                if days:
                    report.problems.append(
                        f"{account.name}: the balance series differs on {len(days)} day(s),"
                        f" first {days[0].isoformat()}"
                    )
                now, was = balances_after[account.pk], balances[account.pk]
                if now[0] != was[0]:
                    report.problems.append(f"{account.name}: balance {was[0]} should be {now[0]}")
                if now[1] != was[1]:
                    report.problems.append(
                        f"{account.name}: holdings value {was[1]} should be {now[1]}"
                    )
            transfers_after = set(transfers.values_list("pk", flat=True))
            if transfers_after - transfers_before:
                report.problems.append(
                    f"{len(transfers_after - transfers_before)} transfer suggestion(s) missing"
                )
            if transfers_before - transfers_after:
                report.problems.append(
                    f"{len(transfers_before - transfers_after)} stale transfer suggestion(s)"
                )
            if not fix:
                raise _Rollback
    except _Rollback:
        pass
    counters = _counter_problems(family)
    report.problems.extend(counters)
    search = _search_problems()
    report.problems.extend(search)
    if fix:
        if counters:
            row_counts.row_counts_drop()
            row_counts.row_counts_ensure()
        if search:
            search_sqlite.search_index_drop()
            search_sqlite.search_index_ensure()
        report.fixed = bool(report.problems)
    return report
