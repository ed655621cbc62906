"""Trade writes: create (a trade, or plain cash as a Transaction); update and delete are in
`changes.py`.

Every reference and rule is checked before anything is written, so a 422 leaves no row
behind (issue 4). Ledger sign throughout: positive = money leaving the account."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypedDict, Unpack

from core.bounds import AMOUNT_LIMIT_TEXT, amount_problem
from core.errors import ValidationFailed
from finance.ledger import LedgerBatch, ledger_batch
from finance.models import Account, Category, Family, Transaction, Transfer
from trades.models import Security, Trade
from trades.services.holdings import AMOUNT_QUANT, holdings_recompute_from_trades
from trades.services.prices import prices_changed, trade_prices_refresh
from trades.services.securities import (
    manual_ticker_parse,
    security_for_ticker,
    security_manual,
    security_visible_get,
    ticker_parse,
)

NOT_IN_HOUSEHOLD = "does not exist in this household"
NOT_A_TRADING_ACCOUNT = "must be an investment or crypto account"
SECURITY_REQUIRED = "is required for a buy or sell (or send ticker or manual_ticker)"
MUST_BE_POSITIVE = "must be greater than zero"
QTY_REQUIRED = "is required for a buy or sell"
PRICE_REQUIRED = "is required for a buy or sell"
AMOUNT_REQUIRED = "is required for a {kind}"
BUY_QTY_NEGATIVE = "must be greater than zero for a buy (send a negative qty only for a sell)"
TRANSFER_ONLY_CASH = "is only for a deposit or withdrawal"
TRANSFER_SAME_ACCOUNT = "must be another account than account_id"
TRANSFER_CURRENCY = "must hold the same currency as the transfer ({currency})"
PRICED_CURRENCY = (
    "must be the account's currency ({currency}) for a buy or sell: its price values the "
    "account's holdings, and prices are not converted between currencies"
)
KIND_UNKNOWN = "is required to tell the kind of trade: send type, investment_activity_label or qty"
LABEL_CONTRADICTS_TYPE = "{label} contradicts type {type}"
ONLY_BUY_SELL_QTY = "only a buy or sell has a quantity and price"
LABEL_CHANGES_KIND = "cannot turn a {kind} into {label}; delete the trade and create a new one"
FEE_EXCEEDS = "the trade's fee would exceed its value; delete the trade and create a new one"

CASH_KINDS = ("deposit", "withdrawal")
TRADE_KINDS = ("buy", "sell", "dividend", "interest")
TYPES = TRADE_KINDS + CASH_KINDS
LABEL_KINDS = {
    "Buy": "buy",
    "Sell": "sell",
    "Dividend": "dividend",
    "Interest": "interest",
    "Contribution": "deposit",
    "Withdrawal": "withdrawal",
}
DEFAULT_LABELS = {
    "buy": "Buy",
    "sell": "Sell",
    "dividend": "Dividend",
    "interest": "Interest",
    "deposit": "Contribution",
    "withdrawal": "Withdrawal",
}


class TradeUpdateFields(TypedDict, total=False):
    """What a trade update may change; only what is given changes."""

    date: dt.date
    qty: Decimal
    price: Decimal
    name: str
    notes: str | None
    currency: str
    investment_activity_label: str
    category_id: uuid.UUID | None


class TradeCreateFields(TradeUpdateFields, total=False):
    """A trade, or plain cash on an investment account (`type` deposit or withdrawal);
    `account_id` and `date` are required."""

    account_id: uuid.UUID
    type: str
    amount: Decimal
    security_id: uuid.UUID | None
    ticker: str
    manual_ticker: str
    transfer_account_id: uuid.UUID | None


@dataclass
class Entry:
    """What a trade create wrote: a Trade, or for deposits and withdrawals a Transaction."""

    record: Trade | Transaction
    entryable_type: str


@dataclass
class _Plan:
    kind: str
    account: Account
    currency: str
    label: str
    category: Category | None = None
    security: Security | None = None
    ticker: tuple[str, str] | None = None
    manual_ticker: str | None = None
    transfer_account: Account | None = None
    qty: Decimal = Decimal(0)
    price: Decimal = Decimal(0)
    amount: Decimal = Decimal(0)
    errors: list[str] = field(default_factory=list)


def quantity_text(qty: Decimal) -> str:
    return f"{abs(qty).normalize():f}"


def trade_name(kind: str, qty: Decimal, security: Security | None) -> str:
    ticker = security.ticker if security is not None else ""
    if kind in ("buy", "sell"):
        return f"{kind.title()} {quantity_text(qty)} {ticker}".strip()
    if kind == "dividend":
        return f"Dividend from {ticker}" if ticker else "Dividend"
    return f"Interest from {ticker}" if ticker else "Interest"


def _kind(data: TradeCreateFields, errors: list[str]) -> str | None:
    label = data.get("investment_activity_label")
    if data.get("type"):
        kind = data["type"]
        label_kind = LABEL_KINDS.get(label) if label else None
        if label_kind and label_kind != kind:
            errors.append(
                "investment_activity_label: "
                + LABEL_CONTRADICTS_TYPE.format(label=label, type=kind)
            )
        return kind
    if label in LABEL_KINDS:
        return LABEL_KINDS[label]
    qty = data.get("qty")
    if qty is not None and qty != 0:
        return "buy" if qty > 0 else "sell"
    errors.append(f"qty: {KIND_UNKNOWN}")
    return None


def _plan(family: Family, data: TradeCreateFields) -> _Plan:
    errors: list[str] = []
    account = Account.objects.filter(family=family, pk=data["account_id"]).first()
    if account is None:
        errors.append(f"account_id: {NOT_IN_HOUSEHOLD}")
    elif account.account_type not in Account.TRADING_TYPES:
        errors.append(f"account_id: {NOT_A_TRADING_ACCOUNT}")
    category = None
    if data.get("category_id") is not None:
        category = Category.objects.filter(family=family, pk=data["category_id"]).first()
        if category is None:
            errors.append(f"category_id: {NOT_IN_HOUSEHOLD}")
    kind = _kind(data, errors)
    plan = _Plan(
        kind=kind or "",
        account=account,  # type: ignore[arg-type]
        currency=data.get("currency") or (account.currency if account else family.currency),
        label=data.get("investment_activity_label") or DEFAULT_LABELS.get(kind or "", "Other"),
        category=category,
        errors=errors,
    )
    if data.get("transfer_account_id") is not None:
        if kind is not None and kind not in CASH_KINDS:
            errors.append(f"transfer_account_id: {TRANSFER_ONLY_CASH}")
        else:
            other = Account.objects.filter(family=family, pk=data["transfer_account_id"]).first()
            if other is None:
                errors.append(f"transfer_account_id: {NOT_IN_HOUSEHOLD}")
            elif account is not None and other.pk == account.pk:
                errors.append(f"transfer_account_id: {TRANSFER_SAME_ACCOUNT}")
            elif other.currency != plan.currency:
                errors.append(
                    "transfer_account_id: " + TRANSFER_CURRENCY.format(currency=plan.currency)
                )
            plan.transfer_account = other
    if kind in ("buy", "sell"):
        if account is not None and plan.currency != account.currency:
            errors.append("currency: " + PRICED_CURRENCY.format(currency=account.currency))
        _plan_security(family, data, plan, required=True)
        _plan_buy_sell(data, plan)
    elif kind in ("dividend", "interest", "deposit", "withdrawal"):
        if kind in ("dividend", "interest"):
            _plan_security(family, data, plan, required=False)
        amount = data.get("amount")
        if amount is None:
            errors.append("amount: " + AMOUNT_REQUIRED.format(kind=kind))
        elif amount <= 0:
            errors.append(f"amount: {MUST_BE_POSITIVE}")
        else:
            # dividends, interest and deposits bring cash in: negative in the ledger sign
            plan.amount = amount if kind == "withdrawal" else -amount
    if errors:
        raise ValidationFailed(errors)
    return plan


def _plan_security(family: Family, data: TradeCreateFields, plan: _Plan, *, required: bool) -> None:
    if data.get("security_id") is not None:
        plan.security = security_visible_get(family=family, security_id=data["security_id"])
        if plan.security is None:
            plan.errors.append("security_id: does not exist")
    elif data.get("ticker"):
        try:
            plan.ticker = ticker_parse(data["ticker"])
        except ValueError as exc:
            plan.errors.append(f"ticker: {exc}")
    elif data.get("manual_ticker"):
        try:
            plan.manual_ticker = manual_ticker_parse(data["manual_ticker"])
        except ValueError as exc:
            plan.errors.append(f"manual_ticker: {exc}")
    elif required:
        plan.errors.append(f"security_id: {SECURITY_REQUIRED}")


def _plan_buy_sell(data: TradeCreateFields, plan: _Plan) -> None:
    qty, price, amount = data.get("qty"), data.get("price"), data.get("amount")
    if qty is None:
        plan.errors.append(f"qty: {QTY_REQUIRED}")
    elif qty == 0:
        plan.errors.append(f"qty: {MUST_BE_POSITIVE}")
    elif plan.kind == "buy" and qty < 0:
        plan.errors.append(f"qty: {BUY_QTY_NEGATIVE}")
    if price is None:
        plan.errors.append(f"price: {PRICE_REQUIRED}")
    elif price <= 0:
        plan.errors.append(f"price: {MUST_BE_POSITIVE}")
    if amount is not None and amount == 0:
        plan.errors.append(f"amount: {MUST_BE_POSITIVE}")
    if plan.errors or qty is None or price is None:
        return
    sign = 1 if plan.kind == "buy" else -1
    plan.qty = sign * abs(qty)
    plan.price = price
    value = abs(qty) * price
    if amount_problem(value) or (amount is None and amount_problem(value.quantize(AMOUNT_QUANT))):
        plan.errors.append(f"qty: qty x price {AMOUNT_LIMIT_TEXT}")
        return
    cash = abs(amount) if amount is not None else value
    plan.amount = sign * cash.quantize(AMOUNT_QUANT)


def _resolve_security(family: Family, plan: _Plan) -> Security | None:
    if plan.security is not None:
        return plan.security
    if plan.ticker is not None:
        ticker, mic = plan.ticker
        return security_for_ticker(ticker=ticker, mic=mic)
    if plan.manual_ticker is not None:
        return security_manual(family=family, ticker=plan.manual_ticker, currency=plan.currency)
    return None


def _cash_create(
    batch: LedgerBatch, family: Family, data: TradeCreateFields, plan: _Plan
) -> Transaction:
    """A deposit or withdrawal: a Transaction, and with a transfer account a confirmed
    Transfer whose other leg is on that account."""
    account, other = plan.account, plan.transfer_account
    if other is None:
        name = "Deposit" if plan.kind == "deposit" else "Withdrawal"
    elif plan.kind == "deposit":
        name = f"Transfer from {other.name}"
    else:
        name = f"Transfer to {other.name}"
    txn = Transaction(
        family=family,
        account=account,
        date=data["date"],
        amount=plan.amount,
        currency=plan.currency,
        name=data.get("name") or name,
        notes=data.get("notes"),
        category=plan.category,
    )
    rows: list[tuple[Transaction, None]] = [(txn, None)]
    leg = None
    if other is not None:
        leg = Transaction(
            family=family,
            account=other,
            date=data["date"],
            amount=-plan.amount,
            currency=plan.currency,
            name=f"Transfer to {account.name}"
            if plan.kind == "deposit"
            else f"Transfer from {account.name}",
            category=plan.category,
        )
        rows.append((leg, None))
    batch.add(rows)
    if leg is not None:
        inflow, outflow = (txn, leg) if txn.amount < 0 else (leg, txn)
        Transfer.objects.create(
            family=family,
            inflow_transaction=inflow,
            outflow_transaction=outflow,
            status=Transfer.Status.CONFIRMED,
        )
        batch.pair(inflow, outflow)
    return txn


def trade_create(*, family: Family, **fields: Unpack[TradeCreateFields]) -> Entry:
    """A trade (buy, sell, dividend, ...) or plain cash on an investment account."""
    data = fields
    plan = _plan(family, data)  # raises 422 before any write
    with ledger_batch(family=family) as batch:
        if plan.kind in CASH_KINDS:
            txn = _cash_create(batch, family, data, plan)
        else:
            return Entry(_trade_write(batch, family, data, plan), "Trade")
    txn.refresh_from_db()
    return Entry(txn, "Transaction")


def _trade_write(batch: LedgerBatch, family: Family, data: TradeCreateFields, plan: _Plan) -> Trade:
    security = _resolve_security(family, plan)
    trade = Trade.objects.create(
        family=family,
        account=plan.account,
        security=security,
        kind=plan.kind,
        date=data["date"],
        qty=plan.qty,
        price=plan.price,
        amount=plan.amount,
        currency=plan.currency,
        name=data.get("name") or trade_name(plan.kind, plan.qty, security),
        notes=data.get("notes"),
        investment_activity_label=plan.label,
        category=plan.category,
    )
    after_write(batch, trade, {trade.account_id: trade.date}, [(trade.security_id, trade.date)])
    return trade


def after_write(
    batch: LedgerBatch,
    trade: Trade,
    dates: dict[uuid.UUID, dt.date | None],
    priced: Iterable[tuple[uuid.UUID | None, dt.date]] = (),
) -> None:
    """A trade's cash moves its account's balance, its quantity the holdings, its price the
    household's price points of its (security, day) before and after the write (`priced`),
    and so the value of every account trading that security."""
    keys = trade_prices_refresh(family_id=trade.family_id, keys=priced)
    done = prices_changed(batch, family_id=trade.family_id, keys=keys)
    for account in Account.objects.filter(pk__in=[pk for pk in dates if pk not in done]):
        holdings_recompute_from_trades(account=account)
    for account_id, date in dates.items():
        batch.touch(trade.family_id, account_id, date)
