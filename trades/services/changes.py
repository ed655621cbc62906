"""Trade writes: update (only what is sent changes) and delete."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any, Unpack

from core.bounds import AMOUNT_LIMIT_TEXT, amount_problem
from core.errors import ValidationFailed
from finance.ledger import ledger_batch, merge_account_dates
from finance.models import Category
from trades.models import Trade
from trades.services.holdings import AMOUNT_QUANT
from trades.services.trades import (
    BUY_QTY_NEGATIVE,
    FEE_EXCEEDS,
    LABEL_CHANGES_KIND,
    LABEL_KINDS,
    MUST_BE_POSITIVE,
    NOT_IN_HOUSEHOLD,
    ONLY_BUY_SELL_QTY,
    PRICED_CURRENCY,
    TradeUpdateFields,
    after_write,
    trade_name,
)


def _cash_after_update(
    trade: Trade, kind: str, qty: Decimal | None, price: Decimal | None
) -> Decimal:
    """The cash of a buy or sell after an update (unsigned; negative when its fee would exceed
    a sell's value). Only the direction changed: the cash as it was. A new qty or price: the
    new value plus the fee the amount held beyond qty x price (paid on a buy, deducted from a
    sell), so a fee sent at create survives a corrected price."""
    if qty is None and price is None:
        return abs(trade.amount)
    old_sign = 1 if trade.kind == "buy" else -1
    fee = old_sign * (abs(trade.amount) - (abs(trade.qty) * trade.price).quantize(AMOUNT_QUANT))
    new_qty = abs(qty if qty is not None else trade.qty)
    new_price = price if price is not None else trade.price
    sign = 1 if kind == "buy" else -1
    return (new_qty * new_price).quantize(AMOUNT_QUANT) + sign * fee


def trade_update(*, trade: Trade, **fields: Unpack[TradeUpdateFields]) -> Trade:
    """Only what is sent changes; a new qty or price recomputes amount and name."""
    data: dict[str, Any] = dict(fields)
    family = trade.family
    errors: list[str] = []
    category = None
    if data.get("category_id") is not None:
        category = Category.objects.filter(family=family, pk=data["category_id"]).first()
        if category is None:
            errors.append(f"category_id: {NOT_IN_HOUSEHOLD}")
    kind = trade.kind
    label = data.get("investment_activity_label")
    label_kind = LABEL_KINDS.get(label) if label else None
    is_buy_sell = trade.kind in (Trade.Kind.BUY, Trade.Kind.SELL)
    if label_kind is not None and label_kind != kind:
        if is_buy_sell and label_kind in ("buy", "sell"):
            kind = label_kind
        else:
            errors.append(
                "investment_activity_label: "
                + LABEL_CHANGES_KIND.format(kind=trade.kind, label=label)
            )
    qty, price = data.get("qty"), data.get("price")
    for name, value in (("qty", qty), ("price", price)):
        if value is None:
            continue
        if not is_buy_sell:
            errors.append(f"{name}: {ONLY_BUY_SELL_QTY}")
        elif value == 0 or (name == "price" and value < 0):
            errors.append(f"{name}: {MUST_BE_POSITIVE}")
        elif name == "qty" and value < 0 and kind == "buy":
            errors.append(f"qty: {BUY_QTY_NEGATIVE}")
    if is_buy_sell and data.get("currency") and data["currency"] != trade.account.currency:
        errors.append("currency: " + PRICED_CURRENCY.format(currency=trade.account.currency))
    cash = None
    if not errors and is_buy_sell and (qty is not None or price is not None or kind != trade.kind):
        cash = _cash_after_update(trade, kind, qty, price)
        if amount_problem(cash):
            errors.append(
                f"{'qty' if qty is not None else 'price'}: qty x price {AMOUNT_LIMIT_TEXT}"
            )
        elif cash < 0:
            errors.append(f"{'qty' if qty is not None else 'price'}: {FEE_EXCEEDS}")
    if errors:
        raise ValidationFailed(errors)

    dates: dict[uuid.UUID, dt.date | None] = {}
    merge_account_dates(dates, trade.account_id, trade.date)
    priced = [(trade.security_id, trade.date)]
    for name in ("date", "notes", "currency"):
        if name in data:
            setattr(trade, name, data[name])
    if label:
        trade.investment_activity_label = label
    if "category_id" in data:
        trade.category = category
    if cash is not None:
        sign = 1 if kind == "buy" else -1
        trade.qty = sign * abs(qty if qty is not None else trade.qty)
        trade.price = price if price is not None else trade.price
        trade.kind, trade.amount = kind, sign * cash
        trade.name = trade_name(kind, trade.qty, trade.security)
    if data.get("name"):
        trade.name = data["name"]
    with ledger_batch(family=family) as batch:
        trade.save()
        merge_account_dates(dates, trade.account_id, trade.date)
        after_write(batch, trade, dates, [*priced, (trade.security_id, trade.date)])
    return trade


def trade_delete(*, trade: Trade) -> None:
    with ledger_batch(family=trade.family) as batch:
        dates: dict[uuid.UUID, dt.date | None] = {trade.account_id: trade.date}
        trade.delete()
        after_write(batch, trade, dates, [(trade.security_id, trade.date)])


def trade_store(*, trade: Trade) -> Trade:
    """Save a trade edited field by field (the admin's form): the balances and holdings of its
    account, and of the account it left, follow."""
    if trade.kind in (Trade.Kind.BUY, Trade.Kind.SELL) and trade.currency != trade.account.currency:
        raise ValidationFailed(
            ["currency: " + PRICED_CURRENCY.format(currency=trade.account.currency)]
        )
    before = Trade.objects.filter(pk=trade.pk).values("account_id", "date", "security_id").first()
    dates: dict[uuid.UUID, dt.date | None] = {}
    priced = [(trade.security_id, trade.date)]
    if before:
        merge_account_dates(dates, before["account_id"], before["date"])
        priced.append((before["security_id"], before["date"]))
    merge_account_dates(dates, trade.account_id, trade.date)
    with ledger_batch(family=trade.family) as batch:
        trade.save()
        after_write(batch, trade, dates, priced)
    return trade
