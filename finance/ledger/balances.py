"""The balance series of each account (AccountBalance), kept by every ledger batch's close.

Semantics (docs/decisions.md, "Ledger" and "Bounds"):
- A row holds the balance at the end of its day, in the account's currency. Rows are stored
  only on days whose flows change the balance (and on an anchor's day), plus one opening row on
  the day before the series starts; a day without a row has the balance of the latest row
  before it, and days before the opening row have the opening balance. So the cost of a write
  follows the number of days with flows after it, not the number of calendar days: a write
  dated 1900 costs about what a write dated today costs.
- Flows: non-excluded transactions and, for trading accounts, the cash of trades (the ledger
  sign: positive = money leaving). An asset's balance goes down by a flow, a liability's
  (money owed) goes up.
- Manual accounts open at 0. A change from day D recomputes only rows from D on (forward from
  the stored balance before D): earlier rows are not touched. A change that only adds flows
  on a few days (a create) moves the stored rows in place instead (finance/ledger/db/series.py),
  a statement per day: its cost does not depend on how many rows follow it.
- Anchored accounts: a provider's reported balance (`Account.reported_balance`, the current
  balance, anchoring the series on the day it was reported) or an opening balance given by the
  household (`opening_balance` as of `opening_balance_date`). Days before the anchor are derived
  backwards from it, later days forwards; any change can move the opening, so such an account's
  series is recomputed whole. A reported balance is the account's balance; an opening balance
  is where the flows after it start from.
- Investment and crypto accounts (finance/ledger/valuation.py): a row holds the account's value,
  its cash (the flows above) plus the market value of its holdings that day, and rows are also
  stored on days where a quantity or a price changes. A manual one's change from day D starts
  from the stored value before D minus the holdings' value then (its cash); an opening balance
  is the cash it opens with. A linked one's reported balance is its value, as for any linked
  account. `Account.holdings_value` is the holdings' value on the series' last day (for a
  linked account: the market values of its holdings), kept with `balance`.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections import defaultdict
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.apps import apps
from django.db import transaction
from django.db.models import Case, Q, Value, When
from django.utils import timezone

from core.exact import ExactSum
from finance.ledger.db.fastinsert import fast_insert
from finance.ledger.db.series import (
    direction,
    rows_before,
    series_merge,
    series_shift,
    series_write,
)
from finance.ledger.valuation import WIDE, Timeline, overlay, reported_holdings_value, timeline
from finance.models import Account, AccountBalance, Transaction

ZERO = Decimal(0)
# New flows on at most this many days move a manual account's series in place (a statement
# per day); more are cheaper derived from the first of them on.
SHIFT_MAX_DAYS = 16
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


def account_flows(*, account: Account, since: dt.date | None = None) -> dict[dt.date, Decimal]:
    """Ledger-signed flow per day from `since` on (all days when None)."""
    flows: dict[dt.date, Decimal] = defaultdict(lambda: ZERO)
    txns = Transaction.objects.filter(account=account, excluded=False)
    if since is not None:
        txns = txns.filter(date__gte=since)
    for row in txns.values("date").annotate(total=ExactSum("amount")).order_by():
        flows[row["date"]] += row["total"]
    trade = trade_model() if account.account_type in Account.TRADING_TYPES else None
    if trade is not None:
        trades = trade.objects.filter(account=account)
        if since is not None:
            trades = trades.filter(date__gte=since)
        for row in trades.values("date").annotate(total=ExactSum("amount")).order_by():
            flows[row["date"]] += row["total"] or ZERO
    return dict(flows)


def _previous_row(account: Account, since: dt.date | None) -> AccountBalance | None:
    """The stored row a change from `since` continues from, or None: recompute it all."""
    if since is None:
        return None
    previous = (
        AccountBalance.objects.filter(account=account, date__lt=since).order_by("-date").first()
    )
    if (
        previous is not None
        and not AccountBalance.objects.filter(account=account, date__lt=previous.date).exists()
    ):
        return None  # only the opening row precedes: the series may start elsewhere now
    return previous


def _running(account: Account, running: Decimal, flows: dict[dt.date, Decimal]):
    """Rows of the balance after each day's flows, starting from `running`."""
    sign = direction(account)
    values: dict[dt.date, Decimal] = {}
    for day in sorted(flows):
        running += sign * flows[day]
        values[day] = running
    return values


def _from_zero(account: Account) -> dict[dt.date, Decimal]:
    """The whole series of an account that opens at 0, with its opening row."""
    flows = account_flows(account=account)
    values = _running(account, ZERO, flows)
    if flows:
        values[min(flows) - _ONE_DAY] = ZERO
    return values


def _refresh_manual_many(changes: list[tuple[Account, dt.date | None]]) -> dict[uuid.UUID, Decimal]:
    """Manual accounts' balance series from each one's change on (`since`; None: whole), in
    a few statements for all of them (the rows each continues from, the flows per account
    and day, one delete, one insert), as many for one account as for many. Returns each
    account's balance."""
    dated = {account.pk: since for account, since in changes if since is not None}
    # The row a change continues from is the latest before it, unless only the opening row
    # precedes (the series may start elsewhere now): then the series is derived whole.
    previous = rows_before(dated, at_least=2)
    # From the change on for an account that continues from a row; whole for the others.
    starts = {
        account.pk: dated[account.pk] if account.pk in previous else None for account, _ in changes
    }
    span = Q()
    for pk, start in starts.items():
        span |= Q(account_id=pk, date__gte=start) if start is not None else Q(account_id=pk)
    flows: dict[uuid.UUID, dict[dt.date, Decimal]] = {pk: {} for pk in starts}
    for pk, day, total in (
        Transaction.objects.filter(span, excluded=False)
        .order_by()
        .values("account_id", "date")
        .annotate(total=ExactSum("amount"))
        .values_list("account_id", "date", "total")
    ):
        flows[pk][day] = total
    balances: dict[uuid.UUID, Decimal] = {}
    rows: list[tuple[uuid.UUID, dt.date, Decimal, str]] = []
    for account, _since in changes:
        pk = account.pk
        if pk in previous:
            values = _running(account, previous[pk], flows[pk])
            balances[pk] = values[max(values)] if values else previous[pk]
        else:
            values = _running(account, ZERO, flows[pk])
            if flows[pk]:
                values[min(flows[pk]) - _ONE_DAY] = ZERO
            balances[pk] = values[max(values)] if values else ZERO
        rows.extend((pk, day, value, account.currency) for day, value in sorted(values.items()))
    AccountBalance.objects.filter(span).delete()
    fast_insert(AccountBalance, ("account", "date", "balance", "currency"), rows)
    return balances


def _refresh_trading(account: Account, since: dt.date | None) -> tuple[Decimal, Decimal]:
    """A manual investment or crypto account: rows of cash plus holdings. Returns (balance,
    holdings value)."""
    previous = None if account.opening_balance is not None else _previous_row(account, since)
    start = None if previous is None else since
    positions = timeline(account=account, since=start) or Timeline()
    cash_before = ZERO
    if account.opening_balance is not None:
        cash_rows, _ = _anchored_rows(
            account, account.opening_balance_date, account.opening_balance
        )
    elif previous is None:
        cash_rows = _from_zero(account)
    else:
        # The stored value before the change is its cash plus its holdings then.
        cash_before = WIDE.subtract(previous.balance, positions.base_value())
        cash_rows = _running(account, cash_before, account_flows(account=account, since=since))
    values, balance, holdings = overlay(
        cash_rows=cash_rows, cash_before=cash_before, positions=positions
    )
    series_write(account, start, values)
    return balance, holdings


def _anchored_rows(
    account: Account, anchor: dt.date, value: Decimal
) -> tuple[dict[dt.date, Decimal], Decimal]:
    """Rows derived from `value` at the end of `anchor`, and the last row's balance."""
    flows = account_flows(account=account)
    sign = direction(account)
    values: dict[dt.date, Decimal] = {anchor: value}
    running = value
    for day in sorted(d for d in flows if d > anchor):
        running += sign * flows[day]
        values[day] = running
    last = running
    running = value
    earlier = sorted((d for d in flows if d <= anchor), reverse=True)
    for day in earlier:
        if day < anchor:
            values[day] = running
        running -= sign * flows[day]  # now the balance at the end of the day before
    first = min([anchor, *earlier])
    values[first - _ONE_DAY] = running
    return values, last


def _refresh_anchored(account: Account, anchor: dt.date, value: Decimal) -> Decimal:
    values, last = _anchored_rows(account, anchor, value)
    series_write(account, None, values)
    return last


def account_balances_refresh(
    *,
    account_dates: Mapping[uuid.UUID, dt.date | None],
    added: Mapping[uuid.UUID, Mapping[dt.date, Decimal]] | None = None,
    only_added: bool = False,
) -> None:
    """Bring each account's series and current balance up to date after its flows changed
    from a date on (None: from its first day).

    `added`: the change was only rows added and deleted, these ledger-signed flows per account
    and day: a manual account's rows then move by them in place (finance/ledger/db/series.py)
    when they fall on a few days; `only_added`: rows were only added (none deleted), and on
    more days the series is merged with them from the first; else it is recomputed from the
    first of them."""
    if not account_dates:
        return
    # Inside a ledger batch's transaction: a savepoint of its own would only cost two round
    # trips (a failure here fails the batch, whose block rolls it all back).
    with transaction.atomic(savepoint=False):
        # Lock in a fixed order: concurrent refreshes of one account queue instead of colliding.
        accounts = list(
            Account.objects.select_for_update(no_key=True)
            .filter(pk__in=list(account_dates))
            .order_by("pk")
        )
        derived: list[tuple[Account, dt.date | None]] = []  # manual: derived together below
        # manual, merged together: (account, its new flows, whence derived if it cannot merge)
        merged: list[tuple[Account, Mapping[dt.date, Decimal], dt.date | None]] = []
        results: dict[uuid.UUID, tuple[Decimal, Decimal | None]] = {}
        for account in accounts:
            since = account_dates[account.pk]
            if added and added.get(account.pk) and since is not None:
                since = min(since, *added[account.pk])
            trading = account.account_type in Account.TRADING_TYPES
            holdings = None
            if account.reported_balance is not None:
                anchor = (
                    timezone.localdate(account.reported_balance_at)
                    if account.reported_balance_at
                    else timezone.localdate()
                )
                _refresh_anchored(account, anchor, account.reported_balance)
                balance = account.reported_balance
                if trading:
                    holdings = reported_holdings_value(account)
            elif trading:
                balance, holdings = _refresh_trading(account, since)
            elif account.opening_balance is not None:
                balance = _refresh_anchored(
                    account, account.opening_balance_date, account.opening_balance
                )
            else:
                balance = None
                flows = added.get(account.pk) if added is not None else None
                if only_added and added is not None and flows is None:
                    continue  # only excluded rows were added to it: no flow moved
                if flows and len(flows) <= SHIFT_MAX_DAYS:
                    balance = series_shift(account, flows, only_added=only_added)
                elif flows and only_added:
                    merged.append((account, flows, since))
                    continue
                if balance is None:
                    derived.append((account, since))
                    continue
            results[account.pk] = (balance, holdings)
        if merged:
            balances = series_merge([(account, flows) for account, flows, _ in merged])
            results.update((pk, (balance, None)) for pk, balance in balances.items())
            derived.extend((a, since) for a, _, since in merged if a.pk not in balances)
        if derived:
            results.update(
                (pk, (balance, None)) for pk, balance in _refresh_manual_many(derived).items()
            )
        _balances_store(results)


def _balances_store(values: Mapping[uuid.UUID, tuple[Decimal, Decimal | None]]) -> None:
    """Each account's (balance, holdings value), in one UPDATE for all of them."""
    if not values:
        return
    if len(values) == 1:  # a single create's account: no CASE to build
        [(pk, (balance, holdings))] = values.items()
        Account.objects.filter(pk=pk).update(balance=balance, holdings_value=holdings)
        return
    columns: dict[str, Any] = {}
    for i, name in enumerate(("balance", "holdings_value")):
        field = Account._meta.get_field(name)
        if all(pair[i] is None for pair in values.values()):
            columns[name] = None  # CASE of nothing but NULLs is text to PostgreSQL
            continue
        columns[name] = Case(
            *(When(pk=pk, then=Value(pair[i], output_field=field)) for pk, pair in values.items()),
            output_field=field,
        )
    Account.objects.filter(pk__in=list(values)).update(**columns)


def account_balance_series(
    *, account: Account, start_date: dt.date, end_date: dt.date
) -> list[tuple[dt.date, Decimal]]:
    """(date, balance) for each day of the range, carried forward from the latest row before
    it; days before the opening row have the opening balance. An account with no rows (no
    flows, no anchor) has no series."""
    stored = dict(
        AccountBalance.objects.filter(
            account=account, date__gte=start_date, date__lte=end_date
        ).values_list("date", "balance")
    )
    carried = (
        AccountBalance.objects.filter(account=account, date__lt=start_date)
        .order_by("-date")
        .values_list("balance", flat=True)
        .first()
    )
    if carried is None:
        opening = (
            AccountBalance.objects.filter(account=account)
            .order_by("date")
            .values_list("balance", flat=True)
            .first()
        )
        if opening is None:
            return []
        carried = opening
    out: list[tuple[dt.date, Decimal]] = []
    day = start_date
    while day <= end_date:
        carried = stored.get(day, carried)
        out.append((day, carried))
        day += _ONE_DAY
    return out
