"""Writes to accounts: create, update, delete (cascading only when asked)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, TypedDict, Unpack

from django.db import transaction
from django.db.models import ProtectedError
from django.utils import timezone

from core.errors import Conflict, ValidationFailed
from finance.ledger import LedgerBatch, ledger_batch, trade_model
from finance.models import Account, Family, Transaction, Transfer

CURRENCY_LOCKED = "cannot change once the account has transactions"
HAS_TRANSACTIONS = (
    "Account {name!r} has {count} transaction(s){trades}. Delete them first, or send "
    "?cascade=true to delete the account with all of them."
)
_FIELDS = ("name", "account_type", "status", "currency", "institution_name")


class AccountFields(TypedDict, total=False):
    name: str
    account_type: str
    status: str
    currency: str | None
    institution_name: str | None
    balance: Decimal | None  # the opening balance, as of balance_date
    balance_date: dt.date


def _opening(batch: LedgerBatch, account: Account, data: AccountFields) -> None:
    """Set (or with None clear) the opening balance the account's series is derived from."""
    if "balance" not in data and "balance_date" not in data:
        return
    if "balance" in data:
        account.opening_balance = data["balance"]
    if account.opening_balance is None:
        account.opening_balance_date = None
    else:
        account.opening_balance_date = (
            data.get("balance_date") or account.opening_balance_date or timezone.localdate()
        )
    Account.objects.filter(pk=account.pk).update(
        opening_balance=account.opening_balance,
        opening_balance_date=account.opening_balance_date,
    )
    batch.touch(account.family, account.pk, None)


def _trade_count(account: Account) -> int:
    model = trade_model()
    return model.objects.filter(account=account).count() if model is not None else 0


def account_create(*, family: Family, **fields: Unpack[AccountFields]) -> Account:
    data: dict[str, Any] = dict(fields)
    account = Account(family=family, currency=data.get("currency") or family.currency)
    for field in _FIELDS:
        if field in data and data[field] is not None:
            setattr(account, field, data[field])
    if account.account_type in Account.TRADING_TYPES:
        account.holdings_value = Decimal(0)  # holds nothing yet (the ledger keeps it from now)
    with ledger_batch(family=family) as batch:
        account.save(force_insert=True)
        if data.get("balance") is not None:
            _opening(batch, account, data)
    if batch.closed and account.opening_balance is not None:
        account.refresh_from_db()
    return account


def account_update(*, account: Account, **fields: Unpack[AccountFields]) -> Account:
    data: dict[str, Any] = dict(fields)
    with ledger_batch(family=account.family) as batch:
        _account_update(batch, account, data)
    if batch.closed:
        account.refresh_from_db()
    return account


def _account_update(batch: Any, account: Account, data: AccountFields) -> None:
    old_classification, old_type = account.classification, account.account_type
    currency_changes = "currency" in data and data["currency"] != account.currency
    if currency_changes and Transaction.objects.filter(account=account).exists():
        raise ValidationFailed([f"currency: {CURRENCY_LOCKED}"])
    for field in _FIELDS:
        if field in data and data[field] is not None:
            setattr(account, field, data[field])
    account.save()
    _opening(batch, account, data)
    if (
        account.classification != old_classification
        or currency_changes
        or (account.account_type in Account.TRADING_TYPES) != (old_type in Account.TRADING_TYPES)
    ):
        # Which flows count (trades, holdings) or which way they move the balance changed:
        # recompute the whole series.
        batch.touch(account.family, account.pk, None)


def account_delete(*, account: Account, cascade: bool) -> None:
    with ledger_batch(family=account.family) as batch:
        _account_delete(batch, account, cascade)


def _account_delete(batch: Any, account: Account, cascade: bool) -> None:
    count = Transaction.objects.filter(account=account).count()
    trades = _trade_count(account)
    if (count or trades) and not cascade:
        raise Conflict(
            HAS_TRANSACTIONS.format(
                name=account.name,
                count=count,
                trades=f" and {trades} trade(s)" if trades else "",
            )
        )
    # Legs in other accounts lose their transfer with this account: they are plain again.
    other_legs = list(
        Transfer.objects.filter(outflow_transaction__account=account)
        .exclude(inflow_transaction__account=account)
        .values_list("inflow_transaction_id", flat=True)
    ) + list(
        Transfer.objects.filter(inflow_transaction__account=account)
        .exclude(outflow_transaction__account=account)
        .values_list("outflow_transaction_id", flat=True)
    )
    try:
        with transaction.atomic():
            batch.delete_record(account)
    except ProtectedError as exc:
        kinds = sorted({type(obj)._meta.verbose_name_plural for obj in exc.protected_objects})
        raise Conflict(
            f"Account {account.name!r} is still referenced by {', '.join(kinds)}; "
            "remove those first."
        ) from None
    batch.legs_reset(other_legs)
