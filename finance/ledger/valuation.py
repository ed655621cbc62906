"""The market value of an investment or crypto account's holdings, day by day.

Semantics (docs/decisions.md, "Investment and crypto accounts"):
- The quantity of a security held at the end of a day is the sum of the `qty` of the account's
  buys and sells of it dated up to that day (sells are negative).
- Its price on a day is the latest price point (trades.SecurityPrice) of the household dated
  on or before that day in the account's currency; on one day `api` beats `provider` beats
  `trade` (SecurityPrice.RANK). Points in another currency are not used for the account (the
  price API refuses one that no account trading the security could use).
- A position's value is `qty x price` rounded to 4 places; a position without any price in
  the account's currency is worth 0. The holdings' value is the sum over positions.
- The value changes only on days where a quantity or a price changes, so the series stays
  sparse: besides the cash's days, a row is needed only on those days (prices dated before
  the account's first trade of a security change nothing and make no row).

The trades app owns the models; the ledger reads them by name (as balances.py reads trades) so
that finance never imports trades."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from django.apps import apps
from django.db.models import Max, Min, Q

from core.errors import ValidationFailed
from core.exact import ExactSum
from finance.models import Account

ZERO = Decimal(0)
QUANT = Decimal("0.0001")
# A position's (and the holdings') value stays below this, so a balance (cash plus holdings)
# always fits NUMERIC(38, 4) whatever prices and quantities were accepted.
MAX_VALUE = Decimal("1e30")
VALUE_TOO_LARGE = (
    "holdings_value: the market value of a position must be below 10^30 in absolute value "
    "(quantity x price)"
)
# Wide enough for any quantity (38 digits) times any price (24 digits), exactly.
WIDE = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_EVEN)


def _model(name: str):
    try:
        return apps.get_model("trades", name)
    except LookupError:
        return None


def position_value(qty: Decimal, price: Decimal) -> Decimal:
    """`qty x price` at 4 places (banker's rounding), refused past MAX_VALUE."""
    value = WIDE.multiply(qty, price).quantize(QUANT, context=WIDE)
    if value.copy_abs() >= MAX_VALUE:
        raise ValidationFailed([VALUE_TOO_LARGE])
    return value


def _checked(total: Decimal) -> Decimal:
    if total.copy_abs() >= MAX_VALUE:
        raise ValidationFailed([VALUE_TOO_LARGE])
    return total


def _best(rows: Iterable[tuple[uuid.UUID, dt.date, str, Decimal]], rank: Mapping[str, int]):
    """(security, day) -> price of the highest-ranked source among the rows."""
    best: dict[tuple[uuid.UUID, dt.date], tuple[int, Decimal]] = {}
    for security_id, day, source, price in rows:
        key = (security_id, day)
        r = rank.get(source, -1)
        if key not in best or r > best[key][0]:
            best[key] = (r, price)
    return {key: price for key, (_, price) in best.items()}


def latest_prices(
    *,
    family_id: uuid.UUID,
    security_ids: Iterable[uuid.UUID],
    currency: str,
    before: dt.date | None = None,
) -> dict[uuid.UUID, Decimal]:
    """Each security's latest price point in `currency` (dated before `before` when given)."""
    model = _model("SecurityPrice")
    ids = list(set(security_ids))
    if model is None or not ids:
        return {}
    points = model.objects.filter(family_id=family_id, security_id__in=ids, currency=currency)
    if before is not None:
        points = points.filter(date__lt=before)
    lasts = dict(
        points.values("security_id").annotate(last=Max("date")).values_list("security_id", "last")
    )
    if not lasts:
        return {}
    match = Q()
    for security_id, day in lasts.items():
        match |= Q(security_id=security_id, date=day)
    rows = points.filter(match).values_list("security_id", "date", "source", "price")
    return {sid: price for (sid, _), price in _best(rows, model.RANK).items()}


@dataclass
class Timeline:
    """An account's positions from `since` on (all days when None): the state at the end of
    the day before, and the changes of quantities and prices per day after it."""

    qty: dict[uuid.UUID, Decimal] = field(default_factory=dict)
    price: dict[uuid.UUID, Decimal] = field(default_factory=dict)
    qty_changes: dict[dt.date, dict[uuid.UUID, Decimal]] = field(default_factory=dict)
    price_changes: dict[dt.date, dict[uuid.UUID, Decimal]] = field(default_factory=dict)

    # each position's value and their sum, kept as the days advance
    values: dict[uuid.UUID, Decimal] = field(default_factory=dict)
    total: Decimal = ZERO

    def days(self) -> set[dt.date]:
        return set(self.qty_changes) | set(self.price_changes)

    def base_value(self) -> Decimal:
        """The holdings' value at the end of the day before `since` (starts the running sum)."""
        self.values = {sid: self._value(sid) for sid in self.qty}
        total = ZERO
        for value in self.values.values():
            total = WIDE.add(total, value)
        self.total = _checked(total)
        return self.total

    def _value(self, security_id: uuid.UUID) -> Decimal:
        held = self.qty.get(security_id, ZERO)
        price = self.price.get(security_id)
        return position_value(held, price) if held and price is not None else ZERO

    def advance(self, day: dt.date) -> Decimal:
        """Apply the day's changes; returns the holdings' value at its end."""
        qty, price = self.qty_changes.get(day, {}), self.price_changes.get(day, {})
        for security_id, delta in qty.items():
            self.qty[security_id] = WIDE.add(self.qty.get(security_id, ZERO), delta)
        self.price.update(price)
        for security_id in {*qty, *price}:
            value = self._value(security_id)
            change = WIDE.subtract(value, self.values.get(security_id, ZERO))
            self.total = WIDE.add(self.total, change)
            self.values[security_id] = value
        return _checked(self.total)


def timeline(*, account: Account, since: dt.date | None) -> Timeline | None:
    """The positions of a trading account (None for another account, or without trades)."""
    trade = _model("Trade")
    if trade is None or account.account_type not in Account.TRADING_TYPES:
        return None
    trades = trade.objects.filter(
        account=account, kind__in=("buy", "sell"), security__isnull=False
    ).order_by()
    firsts = dict(
        trades.values("security_id").annotate(first=Min("date")).values_list("security_id", "first")
    )
    if not firsts:
        return None
    out = Timeline()
    # Days before `start` make one state: nothing is held before the first trade.
    start = since if since is not None else min(firsts.values())
    out.qty = {
        sid: total
        for sid, total in trades.filter(date__lt=start)
        .values("security_id")
        .annotate(total=ExactSum("qty"))
        .values_list("security_id", "total")
    }
    out.price = latest_prices(
        family_id=account.family_id, security_ids=firsts, currency=account.currency, before=start
    )
    later = trades.filter(date__gte=start)
    for day, sid, total in (
        later.values("date", "security_id")
        .annotate(total=ExactSum("qty"))
        .values_list("date", "security_id", "total")
    ):
        out.qty_changes.setdefault(day, {})[sid] = total
    price = _model("SecurityPrice")
    if price is not None:
        points = price.objects.filter(
            family_id=account.family_id, security_id__in=list(firsts), currency=account.currency
        )
        points = points.filter(date__gte=start)
        rows = points.values_list("security_id", "date", "source", "price")
        before_first: dict[uuid.UUID, tuple[dt.date, Decimal]] = {}
        for (sid, day), value in sorted(_best(rows, price.RANK).items(), key=lambda kv: kv[0][1]):
            if day < firsts[sid]:
                before_first[sid] = (day, value)  # the price a first trade starts from
                continue
            out.price_changes.setdefault(day, {})[sid] = value
        for sid, (_, value) in before_first.items():
            first = firsts[sid]
            if sid not in out.price_changes.get(first, {}):
                out.price_changes.setdefault(first, {})[sid] = value
    return out


def overlay(
    *,
    cash_rows: Mapping[dt.date, Decimal],
    cash_before: Decimal,
    positions: Timeline,
) -> tuple[dict[dt.date, Decimal], Decimal, Decimal]:
    """Value rows: cash (carried forward from `cash_before` and `cash_rows`) plus the holdings
    on every day either changes. Returns (rows, last balance, last holdings value)."""
    cash = cash_before
    holdings = positions.base_value()
    values: dict[dt.date, Decimal] = {}
    for day in sorted(set(cash_rows) | positions.days()):
        cash = cash_rows.get(day, cash)
        if day in positions.qty_changes or day in positions.price_changes:
            holdings = positions.advance(day)
        values[day] = WIDE.add(cash, holdings)
    return values, WIDE.add(cash, holdings), holdings


def reported_holdings_value(account: Account) -> Decimal:
    """A linked account's holdings (as the provider reported them, or derived from trades):
    the sum of their market values in the account's currency."""
    holding = _model("Holding")
    if holding is None:
        return ZERO
    total = (
        holding.objects.filter(account=account, currency=account.currency)
        .aggregate(total=ExactSum("market_value"))
        .get("total")
    )
    return total or ZERO
