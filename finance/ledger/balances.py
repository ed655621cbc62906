"""The daily balance series of each account (AccountBalance), kept right after every ledger write.

Semantics (docs/decisions.md, "Ledger"):
- A day's balance is the balance at the end of that day, in the account's currency.
- Flows: non-excluded transactions and, for trading accounts, the cash of trades (the ledger
  sign: positive = money leaving). An asset's balance goes down by a flow, a liability's
  (money owed) goes up.
- Manual accounts start at 0 before their first flow. A change from day D recomputes only
  days D.. (forward from the stored balance of day D-1): earlier rows are not touched.
- Linked accounts (`Account.reported_balance` set by a provider): the reported balance wins.
  It is the current balance and it anchors the series on the day it was reported; earlier days
  are derived backwards from it, later days forwards. Any change can move the opening balance,
  so such an account's series is recomputed whole.
- The series runs from the first flow to the later of today and the last flow.
"""

from __future__ import annotations

import bisect
import datetime as dt
import uuid
from collections import defaultdict
from collections.abc import Mapping
from decimal import Decimal

from django.apps import apps
from django.db import connection, transaction
from django.db.models import Max, Min, Q, Sum
from django.utils import timezone

from finance.ledger.db.fastinsert import fast_insert
from finance.models import Account, AccountBalance, Transaction

ZERO = Decimal(0)
_ONE_DAY = dt.timedelta(days=1)


def trade_model():
    """The trades app's Trade model when it has what balances need (account, date, amount)."""
    try:
        model = apps.get_model("trades", "Trade")
    except LookupError:
        return None
    names = {f.name for f in model._meta.get_fields()}
    if not {"account", "date", "amount"} <= names:
        return None
    return model


def _direction(account: Account) -> int:
    """How a ledger-signed flow moves the balance: assets go down, liabilities go up."""
    return 1 if account.classification == "liability" else -1


def account_flows(*, account: Account, since: dt.date | None = None) -> dict[dt.date, Decimal]:
    """Ledger-signed flow per day from `since` on (all days when None)."""
    flows: dict[dt.date, Decimal] = defaultdict(lambda: ZERO)
    txns = Transaction.objects.filter(account=account, excluded=False)
    if since is not None:
        txns = txns.filter(date__gte=since)
    for row in txns.values("date").annotate(total=Sum("amount")).order_by():
        flows[row["date"]] += row["total"]
    trade = trade_model() if account.account_type in Account.TRADING_TYPES else None
    if trade is not None:
        trades = trade.objects.filter(account=account)
        if since is not None:
            trades = trades.filter(date__gte=since)
        for row in trades.values("date").annotate(total=Sum("amount")).order_by():
            flows[row["date"]] += row["total"] or ZERO
    return dict(flows)


def _first_flow_date(account: Account) -> dt.date | None:
    first = Transaction.objects.filter(account=account, excluded=False).aggregate(d=Min("date"))[
        "d"
    ]
    trade = trade_model() if account.account_type in Account.TRADING_TYPES else None
    if trade is not None:
        first_trade = trade.objects.filter(account=account).aggregate(d=Min("date"))["d"]
        if first_trade is not None and (first is None or first_trade < first):
            first = first_trade
    return first


def _days(start: dt.date, end: dt.date):
    day = start
    while day <= end:
        yield day
        day += _ONE_DAY


def _write(account: Account, start: dt.date, values: dict[dt.date, Decimal]) -> None:
    AccountBalance.objects.filter(account=account, date__gte=start).delete()
    # A series is hundreds to thousands of days: COPY / executemany, not the ORM's per-object
    # preparation (a bulk create rewrites several days per new row).
    fast_insert(
        AccountBalance,
        ("account", "date", "balance", "currency"),
        ((account.pk, day, value, account.currency) for day, value in sorted(values.items())),
    )


def _refresh_manual(account: Account, since: dt.date | None, today: dt.date) -> Decimal:
    first = _first_flow_date(account)
    previous = (
        AccountBalance.objects.filter(account=account, date__lt=since).order_by("-date").first()
        if since is not None
        else None
    )
    if previous is None:
        # Nothing stored before the change: the series (re)starts at the first flow.
        start, running = first, ZERO
        if start is None:
            AccountBalance.objects.filter(account=account).delete()
            return ZERO
        if since is not None and since < start:
            AccountBalance.objects.filter(account=account, date__lt=start).delete()
    else:
        start, running = since, previous.balance
    flows = account_flows(account=account, since=start)
    end = max([today, *flows])
    sign = _direction(account)
    values: dict[dt.date, Decimal] = {}
    for day in _days(start, end):
        running += sign * flows.get(day, ZERO)
        values[day] = running
    _write(account, start, values)
    return running


def _refresh_anchored(account: Account, today: dt.date) -> Decimal:
    reported = account.reported_balance
    anchor = (
        timezone.localdate(account.reported_balance_at) if account.reported_balance_at else today
    )
    flows = account_flows(account=account)
    first = min([anchor, *flows])
    end = max([today, anchor, *flows])
    sign = _direction(account)
    values: dict[dt.date, Decimal] = {anchor: reported}
    running = reported
    for day in _days(anchor + _ONE_DAY, end):
        running += sign * flows.get(day, ZERO)
        values[day] = running
    running = reported
    day = anchor
    while day > first:
        # balance(day - 1) = balance(day) minus what day's flows did to it
        running -= sign * flows.get(day, ZERO)
        day -= _ONE_DAY
        values[day] = running
    AccountBalance.objects.filter(account=account).delete()
    _write(account, first, values)
    return reported


Steps = list[tuple[dt.date, dt.date, Decimal]]


def _shift_steps(
    account: Account, flows: Mapping[dt.date, Decimal], last: dt.date
) -> tuple[list[dt.date], Steps]:
    """(from, until, shift) for each added day: stored days in [from, until) move by `shift`,
    the added flows up to `from` as the account's balance sees them."""
    sign = _direction(account)
    days = sorted(flows)
    steps: Steps = []
    running = ZERO
    for i, day in enumerate(days):
        running += sign * flows[day]
        steps.append((day, days[i + 1] if i + 1 < len(days) else last + _ONE_DAY, running))
    return days, steps


def _shift(
    accounts: list[Account], added: Mapping[uuid.UUID, Mapping[dt.date, Decimal]], today: dt.date
) -> dict[uuid.UUID, Decimal]:
    """Flows were only added (new transactions) inside the stored series: each stored day moves
    by the new flows up to it, in place, instead of the series being rebuilt (a few statements
    for all the accounts). Returns the new balance of each account so moved; the others (empty
    series, an added day or today outside it) need `_refresh_manual`."""
    flows = {
        a.pk: {day: total for day, total in added.get(a.pk, {}).items() if total} for a in accounts
    }
    bounds = {
        row["account_id"]: (row["first"], row["last"])
        for row in AccountBalance.objects.filter(
            account_id__in=[a.pk for a in accounts if flows[a.pk]]
        )
        .values("account_id")
        .annotate(first=Min("date"), last=Max("date"))
        .order_by()
    }
    plans: dict[uuid.UUID, tuple[dt.date, list[dt.date], Steps]] = {}
    for account in accounts:
        days_flows = flows[account.pk]
        first, last = bounds.get(account.pk, (None, None))
        if not days_flows or first is None or min(days_flows) < first:
            continue
        if max(*days_flows, today) > last:
            continue
        days, steps = _shift_steps(account, days_flows, last)
        plans[account.pk] = (last, days, steps)
    if not plans:
        return {}
    table = connection.ops.quote_name(AccountBalance._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # numeric arithmetic in the database, exact: one statement for every account, each
            # step spread over its days so the join is on (account, date), not a range.
            steps = [
                (pk, *step) for pk, (_, _, account_steps) in plans.items() for step in account_steps
            ]
            cursor.execute(
                f"UPDATE {table} AS b SET balance = b.balance + s.shift FROM ("  # noqa: S608
                "SELECT v.account_id, d::date AS day, v.shift "
                "FROM unnest(%s::uuid[], %s::date[], %s::date[], %s::numeric[]) "
                "AS v(account_id, lo, hi, shift), "
                "generate_series(v.lo, v.hi - 1, interval '1 day') AS d"
                ") AS s WHERE b.account_id = s.account_id AND b.date = s.day",
                [list(column) for column in zip(*steps, strict=True)],
            )
        else:
            # SQLite keeps decimals as floating point: add in Python with Decimal instead.
            field = AccountBalance._meta.get_field("balance")
            updates = []
            for pk, (_, days, steps) in plans.items():
                stored = AccountBalance.objects.filter(account_id=pk, date__gte=days[0])
                for row_pk, day, balance in stored.values_list("pk", "date", "balance"):
                    shift = steps[bisect.bisect_right(days, day) - 1][2]
                    updates.append((field.get_db_prep_save(balance + shift, connection), row_pk))
            cursor.executemany(
                f"UPDATE {table} SET balance = %s WHERE id = %s",  # noqa: S608
                updates,
            )
    last_days = Q()
    for pk, (last, _, _) in plans.items():
        last_days |= Q(account_id=pk, date=last)
    return dict(AccountBalance.objects.filter(last_days).values_list("account_id", "balance"))


def account_balances_refresh(
    *,
    account_dates: Mapping[uuid.UUID, dt.date | None],
    added: Mapping[uuid.UUID, Mapping[dt.date, Decimal]] | None = None,
) -> None:
    """Bring each account's series and current balance up to date after its flows changed
    from a date on (None: from its first day).

    `added`: the change was only new flows, these ledger-signed sums per account and day (a
    create or a bulk create); a manual account's series then moves in place (`_shift`)."""
    if not account_dates:
        return
    today = timezone.localdate()
    with transaction.atomic():
        # Lock in a fixed order: concurrent refreshes of one account queue instead of colliding.
        accounts = list(
            Account.objects.select_for_update(no_key=True)
            .filter(pk__in=list(account_dates))
            .order_by("pk")
        )
        shifted = (
            _shift([a for a in accounts if a.reported_balance is None], added, today)
            if added
            else {}
        )
        for account in accounts:
            if account.pk in shifted:
                balance = shifted[account.pk]
            elif account.reported_balance is not None:
                balance = _refresh_anchored(account, today)
            else:
                balance = _refresh_manual(account, account_dates[account.pk], today)
            Account.objects.filter(pk=account.pk).update(balance=balance)


def account_reported_balance_set(
    *, account: Account, balance: Decimal, at: dt.datetime | None = None
) -> None:
    """A provider reported the account's balance: it becomes the current balance and anchors
    the series. (Providers call this after a sync.)"""
    account.reported_balance = balance
    account.reported_balance_at = at or timezone.now()
    Account.objects.filter(pk=account.pk).update(
        reported_balance=account.reported_balance,
        reported_balance_at=account.reported_balance_at,
    )
    account_balances_refresh(account_dates={account.pk: None})


def account_balance_series(
    *, account: Account, start_date: dt.date, end_date: dt.date
) -> list[tuple[dt.date, Decimal]]:
    """(date, balance) for each day of the range on which the account has a history; days after
    the last stored day carry its balance forward."""
    rows = list(
        AccountBalance.objects.filter(
            account=account, date__gte=start_date, date__lte=end_date
        ).values_list("date", "balance")
    )
    stored = dict(rows)
    last = (
        AccountBalance.objects.filter(account=account, date__lte=end_date)
        .order_by("-date")
        .values_list("date", "balance")
        .first()
    )
    if last is None:
        return []
    first_day = AccountBalance.objects.filter(account=account).order_by("date").first().date
    out: list[tuple[dt.date, Decimal]] = []
    carried = None
    before = (
        AccountBalance.objects.filter(account=account, date__lt=start_date)
        .order_by("-date")
        .values_list("balance", flat=True)
        .first()
    )
    carried = before
    for day in _days(max(start_date, first_day), end_date):
        if day in stored:
            carried = stored[day]
        if carried is not None:
            out.append((day, carried))
    return out
