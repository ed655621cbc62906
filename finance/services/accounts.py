"""Writes to accounts: create, update, delete (cascading only when asked)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import ProtectedError

from finance.api.errors import Conflict, ValidationFailed
from finance.models import Account, Family, Transaction, Transfer
from finance.services.balances import account_balances_refresh, trade_model
from finance.services.transfers import transfer_legs_reset

CURRENCY_LOCKED = "cannot change once the account has transactions"
HAS_TRANSACTIONS = (
    "Account {name!r} has {count} transaction(s){trades}. Delete them first, or send "
    "?cascade=true to delete the account with all of them."
)
_FIELDS = ("name", "account_type", "status", "currency", "institution_name")


def _trade_count(account: Account) -> int:
    model = trade_model()
    return model.objects.filter(account=account).count() if model is not None else 0


def account_create(*, family: Family, data: dict[str, Any]) -> Account:
    account = Account(family=family, currency=data.get("currency") or family.currency)
    for field in _FIELDS:
        if field in data and data[field] is not None:
            setattr(account, field, data[field])
    account.save(force_insert=True)
    return account


@transaction.atomic
def account_update(*, account: Account, data: dict[str, Any]) -> Account:
    old_classification = account.classification
    currency_changes = "currency" in data and data["currency"] != account.currency
    if currency_changes and Transaction.objects.filter(account=account).exists():
        raise ValidationFailed([f"currency: {CURRENCY_LOCKED}"])
    for field in _FIELDS:
        if field in data and data[field] is not None:
            setattr(account, field, data[field])
    account.save()
    if account.classification != old_classification or currency_changes:
        # Which way flows move the balance changed: recompute the whole series.
        account_balances_refresh(account_dates={account.pk: None})
        account.refresh_from_db()
    return account


@transaction.atomic
def account_delete(*, account: Account, cascade: bool) -> None:
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
            account.delete()
    except ProtectedError as exc:
        kinds = sorted({type(obj)._meta.verbose_name_plural for obj in exc.protected_objects})
        raise Conflict(
            f"Account {account.name!r} is still referenced by {', '.join(kinds)}; "
            "remove those first."
        ) from None
    transfer_legs_reset(transaction_ids=other_legs)
