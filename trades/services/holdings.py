"""Holdings: derived from an account's trades, or replaced by what a provider reports."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction

from finance.ledger import latest_prices, position_value
from finance.models import Account
from providers.types import UpstreamHolding
from trades.models import Holding, Security, Trade
from trades.services.securities import security_for_ticker, security_manual_by_name, ticker_parse

ZERO = Decimal(0)
AMOUNT_QUANT = Decimal("0.0001")


@dataclass
class _Position:
    qty: Decimal = ZERO
    cost: Decimal = ZERO
    price: Decimal | None = None
    currency: str = ""
    date: dt.date | None = None


def _fold(trades: Iterable[Trade]) -> dict[uuid.UUID, _Position]:
    """Average-cost positions per security from trades in date order.

    A buy adds its quantity and its cash amount (fees included) to the cost; a sell removes
    its quantity and the average cost of what it sold. The last trade's price is the price."""
    positions: dict[uuid.UUID, _Position] = {}
    for trade in trades:
        pos = positions.setdefault(trade.security_id, _Position())
        if trade.kind == Trade.Kind.BUY:
            pos.cost += abs(trade.amount)
            pos.qty += trade.qty
        elif trade.kind == Trade.Kind.SELL:
            sold = abs(trade.qty)
            if pos.qty > 0:
                pos.cost -= pos.cost * min(sold, pos.qty) / pos.qty
            pos.qty -= sold
        if pos.qty <= 0:
            pos.cost = ZERO
        if trade.price > 0:
            pos.price = trade.price
        pos.currency = trade.currency
        pos.date = trade.date
    return positions


def _lock(account: Account) -> None:
    """Serialise holding rewrites of one account (concurrent trade writes, a sync)."""
    list(Account.objects.select_for_update(no_key=True).filter(pk=account.pk).values_list("pk"))


def account_has_provider_holdings(account: Account) -> bool:
    return Holding.objects.filter(account=account, source=Holding.Source.PROVIDER).exists()


@transaction.atomic
def holdings_recompute_from_trades(*, account: Account) -> int:
    """Rebuild a manual account's holdings from its buys and sells; return how many it has.

    An account whose holdings came from a provider keeps them: the provider is the truth."""
    _lock(account)
    if account_has_provider_holdings(account):
        return 0
    trades = (
        Trade.objects.filter(
            account=account, kind__in=(Trade.Kind.BUY, Trade.Kind.SELL), security__isnull=False
        )
        .only("security_id", "kind", "qty", "price", "amount", "currency", "date")
        .order_by("date", "created_at", "id")
    )
    positions = {sid: p for sid, p in _fold(trades).items() if p.qty != 0}
    # The household's latest price of each security (any source), as the account is valued.
    for currency in {p.currency for p in positions.values()}:
        latest = latest_prices(
            family_id=account.family_id,
            security_ids=[sid for sid, p in positions.items() if p.currency == currency],
            currency=currency,
        )
        for security_id, price in latest.items():
            positions[security_id].price = price
    Holding.objects.filter(account=account).exclude(security_id__in=list(positions)).delete()
    existing = {h.security_id: h for h in Holding.objects.filter(account=account)}
    for security_id, pos in positions.items():
        market_value = position_value(pos.qty, pos.price) if pos.price else None
        values = {
            "qty": pos.qty,
            "cost_basis": pos.cost.quantize(AMOUNT_QUANT),
            "price": pos.price,
            "market_value": market_value,
            "currency": pos.currency,
            "date": pos.date,
            "source": Holding.Source.TRADES,
        }
        holding = existing.get(security_id)
        if holding is None:
            Holding.objects.create(
                family_id=account.family_id, account=account, security_id=security_id, **values
            )
        elif any(getattr(holding, k) != v for k, v in values.items()):
            Holding.objects.filter(pk=holding.pk).update(**values)
    return len(positions)


def _upstream_security(account: Account, holding: UpstreamHolding) -> Security:
    if holding.ticker and holding.ticker.strip():
        try:
            ticker, mic = ticker_parse(holding.ticker)
        except ValueError:
            pass
        else:
            return security_for_ticker(
                ticker=ticker, mic=mic, name=holding.name, currency=holding.currency
            )
    return security_manual_by_name(
        family=account.family, name=holding.name or holding.ticker or "", currency=holding.currency
    )


@dataclass
class ProviderHoldings:
    """What a provider's holdings left: how many holdings the account has now, and the prices
    reported (security -> (price, currency)) for the caller to record as price points."""

    count: int
    prices: dict[uuid.UUID, tuple[Decimal, str]]


@transaction.atomic
def holdings_replace_from_provider(
    *, account: Account, holdings: list[UpstreamHolding], as_of: dt.date
) -> ProviderHoldings:
    """Make the account's holdings exactly what the provider reported.

    Securities are found or created by ticker (shared), else by name (a manual security of the
    household). Several upstream rows of one security are summed. The prices reported are
    returned: the caller (the sync) records them as the household's `provider` price points
    of `as_of` through its ledger batch (trades.services.prices.provider_prices_record)."""
    _lock(account)
    merged: dict[uuid.UUID, dict] = {}
    for upstream in holdings:
        security = _upstream_security(account, upstream)
        row = merged.setdefault(
            security.pk,
            {"qty": ZERO, "cost_basis": None, "market_value": None, "price": None},
        )
        row["currency"] = upstream.currency or account.currency
        row["qty"] += upstream.quantity
        if upstream.cost_basis is not None:
            row["cost_basis"] = (row["cost_basis"] or ZERO) + upstream.cost_basis
        value = upstream.value
        if value is None and upstream.price is not None:
            value = upstream.quantity * upstream.price
        if value is not None:
            row["market_value"] = (row["market_value"] or ZERO) + value
        if upstream.price is not None:
            row["price"] = upstream.price
        elif value is not None and upstream.quantity:
            row["unit_value"] = value / upstream.quantity
    Holding.objects.filter(account=account).exclude(security_id__in=list(merged)).delete()
    existing = {h.security_id: h for h in Holding.objects.filter(account=account)}
    for security_id, row in merged.items():
        values = {
            "qty": row["qty"],
            "cost_basis": _q(row["cost_basis"]),
            "price": row["price"],
            "market_value": _q(row["market_value"]),
            "currency": row["currency"],
            "date": as_of,
            "source": Holding.Source.PROVIDER,
        }
        holding = existing.get(security_id)
        if holding is None:
            Holding.objects.create(
                family_id=account.family_id, account=account, security_id=security_id, **values
            )
        else:
            Holding.objects.filter(pk=holding.pk).update(**values)
    prices = {}
    for security_id, row in merged.items():
        price = row["price"] if row["price"] is not None else row.get("unit_value")
        if price is not None:
            prices[security_id] = (price, row["currency"])
    return ProviderHoldings(count=len(merged), prices=prices)


def _q(value: Decimal | None) -> Decimal | None:
    return None if value is None else value.quantize(AMOUNT_QUANT)
