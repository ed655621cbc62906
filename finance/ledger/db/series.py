"""A manual account's balance series moved in place by changed flows (balances.py).

A create or a delete changes the flows of a few days: every stored row from each such day on
moves by the change in one UPDATE, a row is added on a day that had none (and removed from one
left without flows), and the opening row moves when the series now starts elsewhere. The cost
is a few statements per changed day, whatever the date: a row dated 1900 costs about what a
row dated today costs, where recomputing from its day would rewrite every row after it."""

# ruff: noqa: S608 - every statement is built from model table names and constants, never input.
from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import reduce

from django.db import connection
from django.db.models import Count, Max, Q, Subquery

from core.exact import WIDE
from finance.ledger.db.fastinsert import fast_insert
from finance.models import Account, AccountBalance, Transaction

_ONE_DAY = dt.timedelta(days=1)
ZERO = Decimal(0)


def direction(account: Account) -> int:
    """How a ledger-signed flow moves the balance: assets go down, liabilities go up."""
    return 1 if account.classification == "liability" else -1


def _reopen(account: Account, rows, opening: dt.date, flows: Mapping[dt.date, Decimal]) -> None:
    """The rows a derivation would leave: none on a day whose flows all went, and the opening
    row (at 0) the day before the first flow, wherever that now is."""
    txns = Transaction.objects.filter(account=account, excluded=False)
    kept = set(txns.filter(date__in=list(flows)).values_list("date", flat=True))
    if gone := [day for day in flows if day not in kept]:
        rows.filter(date__in=gone).delete()
    first = txns.order_by("date").values_list("date", flat=True).first()
    if first is None:
        rows.delete()
        return
    start = first - _ONE_DAY
    rows.filter(date__lt=start).delete()
    if opening > start and not txns.filter(date=opening).exists():
        rows.filter(date=opening).delete()  # it only repeated the row before it now
    AccountBalance.objects.get_or_create(
        account=account, date=start, defaults={"balance": ZERO, "currency": account.currency}
    )


def series_shift(
    account: Account, flows: Mapping[dt.date, Decimal], *, only_added: bool = False
) -> Decimal | None:
    """Move the series of a manual account (opening at 0) by these ledger-signed flows per
    day (new rows add theirs, deleted rows take theirs away). Returns the account's balance, or
    None when it has no series yet (the caller derives it whole). `only_added`: the flows are
    rows added, none deleted: when they all fall after the opening row, no day lost its last
    row and the series still starts where it did, so the opening is not looked at again.

    A single create on a day inside the series is three statements: the opening, the last
    row and the stored days read at once, the day's row added carrying the balance before it
    (when it has none), and one UPDATE; the account's balance is then the last row's moved by
    every flow (a new day after it carried its balance), not read again."""
    rows = AccountBalance.objects.filter(account=account)
    first_day = rows.order_by("date").values("date")[:1]
    last_day = rows.order_by("-date").values("date")[:1]
    ends = Q(date=Subquery(first_day)) | Q(date=Subquery(last_day))
    known = dict(
        rows.filter(Q(date__in=list(flows)) | ends).order_by().values_list("date", "balance")
    )
    if not known:
        return None
    opening, last = min(known), max(known)  # the first and the last rows are among them
    table = AccountBalance._meta.db_table
    account_id = Account._meta.pk.get_db_prep_value(account.pk, connection)
    field = AccountBalance._meta.get_field("balance")
    moved = (
        f"exact_add(balance, %s, {field.decimal_places})"
        if connection.vendor == "sqlite"
        else "balance + %s"
    )
    zero = field.get_db_prep_save(ZERO, connection)
    sign = direction(account)
    with connection.cursor() as cursor:
        for day, flow in sorted(flows.items()):
            if day not in known:
                cursor.execute(
                    f"INSERT INTO {table} (account_id, date, balance, currency) VALUES (%s, %s, "
                    f"COALESCE((SELECT balance FROM {table} WHERE account_id = %s AND date < %s "
                    "ORDER BY date DESC LIMIT 1), %s), %s)",
                    [account_id, day, account_id, day, zero, account.currency],
                )
            cursor.execute(
                f"UPDATE {table} SET balance = {moved} WHERE account_id = %s AND date >= %s",
                [sign * flow, account_id, day],
            )
        if only_added and min(flows) > opening:
            total = reduce(WIDE.add, flows.values(), ZERO)
            return WIDE.add(known[last], total if sign > 0 else WIDE.minus(total))
        _reopen(account, rows, opening, flows)
    return rows.order_by("-date").values_list("balance", flat=True).first()


def series_write(account: Account, start: dt.date | None, values: dict[dt.date, Decimal]) -> None:
    """Replace the account's rows from `start` on (all when None) with `values`."""
    stored = AccountBalance.objects.filter(account=account)
    if start is not None:
        stored = stored.filter(date__gte=start)
    stored.delete()
    # COPY / executemany, not the ORM's per-object preparation.
    fast_insert(
        AccountBalance,
        ("account", "date", "balance", "currency"),
        ((account.pk, day, value, account.currency) for day, value in sorted(values.items())),
    )


def rows_before(
    starts: Mapping[uuid.UUID, dt.date], *, at_least: int = 1
) -> dict[uuid.UUID, Decimal]:
    """account id -> the balance of its latest stored row before its day in `starts`, for
    the accounts that have at least `at_least` rows before it: two queries for all of them
    (the latest days, then their balances)."""
    before = Q()
    for pk, start in starts.items():
        before |= Q(account_id=pk, date__lt=start)
    if not before:
        return {}
    at = Q()
    for pk, last, count in (
        AccountBalance.objects.filter(before)
        .order_by()
        .values("account_id")
        .annotate(last=Max("date"), n=Count("id"))
        .values_list("account_id", "last", "n")
    ):
        if count >= at_least:
            at |= Q(account_id=pk, date=last)
    if not at:
        return {}
    return dict(AccountBalance.objects.filter(at).values_list("account_id", "balance"))


def series_merge(
    merges: Sequence[tuple[Account, Mapping[dt.date, Decimal]]],
) -> dict[uuid.UUID, Decimal]:
    """Rows were only added to these accounts, on these days: from the first of them on, each
    day's balance is the stored series' (the day's own row, or the one it carries) plus the new
    flows up to that day. Read from the series (a row per day with flows), never from the
    ledger, so a batch across many days costs its days, not the account's rows (a bulk of 1,000
    rows over a year of an account holding 100,000: 1,680 series rows read, not 100,000 ledger
    rows summed); and five statements for all the accounts (the row each continues from, in
    two; their rows from there on; one delete; one insert), not four for each.

    Returns each merged account's balance. An account left out has no row before its first
    new day: its series is empty, or the new rows reach its opening row (the opening moves: the
    caller derives it)."""
    starts = {account.pk: min(flows) for account, flows in merges if flows}
    carried = rows_before(starts)
    if not carried:
        return {}
    rows = AccountBalance.objects.order_by()
    span = Q()
    for pk in carried:
        span |= Q(account_id=pk, date__gte=starts[pk])
    stored: dict[uuid.UUID, dict[dt.date, Decimal]] = {pk: {} for pk in carried}
    for pk, day, balance in rows.filter(span).values_list("account_id", "date", "balance"):
        stored[pk][day] = balance
    balances: dict[uuid.UUID, Decimal] = {}
    written: list[tuple[uuid.UUID, dt.date, Decimal, str]] = []
    for account, flows in merges:
        if account.pk not in carried:
            continue
        sign, last, added = direction(account), carried[account.pk], ZERO
        days = stored[account.pk]
        for day in sorted(days.keys() | flows.keys()):
            last = days.get(day, last)
            added += flows.get(day, ZERO)
            written.append((account.pk, day, last + sign * added, account.currency))
        balances[account.pk] = written[-1][2]
    rows.filter(span).delete()
    # COPY / executemany, not the ORM's per-object preparation.
    fast_insert(AccountBalance, ("account", "date", "balance", "currency"), written)
    return balances
