"""Net worth in one currency, day by day: assets and liabilities from each account's daily
balance (finance/services/balances.py), converted at each day's rate (exchange_rates.Rates).

A liability's balance is what is owed (positive), so net worth = assets - liabilities. A
non-zero balance without a usable rate that day is left out of the day's totals and its
currency is named in `missing_rates`: never counted 1:1."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

from django.db.models import Exists, OuterRef, Subquery

from finance.models import Account, AccountBalance, Family
from finance.money import minor_unit
from finance.selectors.exchange_rates import PRECISION, Rates

ZERO = Decimal(0)
HIDDEN_STATUSES = (Account.Status.DISABLED, Account.Status.PENDING_DELETION)


@dataclass(frozen=True)
class NetWorthDay:
    date: dt.date
    assets: Decimal
    liabilities: Decimal

    @property
    def net_worth(self) -> Decimal:
        return self.assets - self.liabilities


@dataclass(frozen=True)
class AccountWorth:
    account: Account
    balance: Decimal  # on the last day, in the account's currency
    converted_balance: Decimal | None  # None: no usable rate on the last day


@dataclass
class NetWorth:
    currency: str
    series: list[NetWorthDay]
    accounts: list[AccountWorth]
    missing_rates: list[tuple[str, dt.date]] = field(default_factory=list)


def counted_accounts(*, family: Family) -> list[Account]:
    """The accounts net worth counts: every one but disabled and pending deletion."""
    return list(
        Account.objects.filter(family=family)
        .exclude(status__in=HIDDEN_STATUSES)
        .order_by("name", "id")
    )


def daily_balances(
    *, accounts: list[Account], start: dt.date, end: dt.date
) -> dict[object, list[Decimal]]:
    """Each account's end-of-day balance for every day of [start, end]: a day without a
    stored row carries the latest before it (the store keeps only days that change), days
    before the first (opening) row have the opening balance, and an account with no row at all
    keeps its `balance` (finance/ledger/balances.py)."""
    days = (end - start).days + 1
    if not accounts:
        return {}
    ids = [a.pk for a in accounts]
    carried_in = {
        pk: (before if before is not None else opening, has_rows)
        for pk, before, opening, has_rows in Account.objects.filter(pk__in=ids)
        .annotate(
            before=Subquery(
                AccountBalance.objects.filter(account=OuterRef("pk"), date__lt=start)
                .order_by("-date")
                .values("balance")[:1]
            ),
            opening=Subquery(
                AccountBalance.objects.filter(account=OuterRef("pk"))
                .order_by("date")
                .values("balance")[:1]
            ),
            has_rows=Exists(AccountBalance.objects.filter(account=OuterRef("pk"))),
        )
        .values_list("pk", "before", "opening", "has_rows")
    }
    out: dict[object, list[Decimal]] = {}
    for account in accounts:
        before, has_rows = carried_in[account.pk]
        if not has_rows:
            out[account.pk] = [account.balance] * days
            continue
        # One query per account, on its (account, date) index: no account id per row to read
        # back (a uuid per row was most of the time of one query for all).
        rows = dict(
            AccountBalance.objects.filter(
                account_id=account.pk, date__gte=start, date__lte=end
            ).values_list("date", "balance")
        )
        current, values = before or ZERO, []
        for i in range(days):
            current = rows.get(start + dt.timedelta(days=i), current)
            values.append(current)
        out[account.pk] = values
    return out


def net_worth(*, family: Family, start: dt.date, end: dt.date, currency: str) -> NetWorth:
    accounts = counted_accounts(family=family)
    days = (end - start).days + 1
    balances = daily_balances(accounts=accounts, start=start, end=end)
    rates = Rates(
        family=family,
        target=currency,
        currencies={a.currency for a in accounts},
        start=start,
        end=end,
    )
    unit = minor_unit(currency)
    zero = ZERO.quantize(unit)
    # Every figure is rounded to the currency's minor unit, so the totals are too.
    assets, liabilities = [zero] * days, [zero] * days
    missing: dict[str, dt.date] = {}
    worths: list[AccountWorth] = []
    with localcontext(prec=PRECISION):
        for account in accounts:
            totals = liabilities if account.classification == "liability" else assets
            factors = rates.factors(account.currency)
            same = account.currency == currency
            converted: Decimal | None = None
            for i, balance in enumerate(balances[account.pk]):
                if not balance:
                    converted = zero
                    continue
                if same:
                    converted = balance.quantize(unit, rounding=ROUND_HALF_EVEN)
                elif factors[i] is None:
                    day = start + dt.timedelta(days=i)
                    missing[account.currency] = max(day, missing.get(account.currency, day))
                    converted = None
                    continue
                else:
                    converted = (balance * factors[i]).quantize(unit, rounding=ROUND_HALF_EVEN)
                totals[i] += converted
            worths.append(AccountWorth(account, balances[account.pk][-1], converted))
    series = [
        NetWorthDay(start + dt.timedelta(days=i), assets[i], liabilities[i]) for i in range(days)
    ]
    return NetWorth(currency, series, worths, sorted(missing.items()))
