"""A realistic year for the demo household (`manage.py demo`): accounts in two currencies, a
brokerage with holdings, categorised spending, transfers, a published import.

Every write goes through the services the API uses (the ledger batch for transactions)."""

from __future__ import annotations

import datetime as dt
import io
import random
from decimal import Decimal
from typing import Any

from finance.fx.services import exchange_rate_set
from finance.models import Account, Family, Transaction, Transfer
from finance.selectors.dashboard import family_today
from finance.services.accounts import account_create
from finance.services.catalog import category_create, merchant_create, tag_create
from finance.services.transactions_bulk import transactions_bulk_create
from finance.services.transfers import transfer_confirm, transfer_create

D = Decimal
CATEGORIES = {
    "Salary": "#16a34a",
    "Rent": "#7c3aed",
    "Groceries": "#2563eb",
    "Restaurants": "#d97706",
    "Transport": "#0891b2",
    "Utilities": "#65a30d",
    "Entertainment": "#db2777",
    "Travel": "#ea580c",
    "Health": "#dc2626",
}
MERCHANTS = {
    "Groceries": ["FreshMart", "Corner Grocer", "Green Basket"],
    "Restaurants": ["Luigi's Trattoria", "Noodle Bar", "Bean There Café"],
    "Transport": ["City Transit", "Shell station"],
    "Entertainment": ["Cinema Paradiso", "StreamFlix"],
    "Health": ["Sunrise Pharmacy"],
}


def demo_seed(*, family: Family) -> bool:
    """Fill an empty household with a year of activity; False (nothing written) when it
    already has accounts."""
    if Account.objects.filter(family=family).exists():
        return False
    rng = random.Random(2024)
    today = family_today(family)
    start = first_month(today)
    cur, other = family.currency, "EUR" if family.currency != "EUR" else "USD"

    categories = {
        name: category_create(family=family, name=name, color=color)
        for name, color in CATEGORIES.items()
    }
    merchants = {
        name: merchant_create(family=family, name=name)
        for names in MERCHANTS.values()
        for name in names
    }
    holiday = tag_create(family=family, name="Holiday", color="#ea580c")

    def account(name: str, kind: str, currency: str, opening: str, institution: str) -> Account:
        return account_create(
            family=family,
            name=name,
            account_type=kind,
            currency=currency,
            institution_name=institution,
            balance=D(opening),
            balance_date=start - dt.timedelta(days=1),
        )

    checking = account("Everyday checking", "depository", cur, "19000.00", "First Street Bank")
    savings = account("Savings", "depository", cur, "12000.00", "First Street Bank")
    card = account("Visa card", "credit_card", cur, "0", "First Street Bank")
    abroad = account(f"{other} account", "depository", other, "2400.00", "Euro Direct")
    brokerage = account("Brokerage", "investment", cur, "0", "Index Invest")

    day, rate = start - dt.timedelta(days=7), D("1.08")
    while day <= today:  # a rate every few days (a rate counts for at most 7 days)
        rate += D(rng.randint(-8, 8)) / 1000
        exchange_rate_set(family=family, date=day, from_currency=other, to_currency=cur, rate=rate)
        day += dt.timedelta(days=5)
    exchange_rate_set(family=family, date=today, from_currency=other, to_currency=cur, rate=rate)

    items: list[dict[str, Any]] = []

    def spend(acc: Account, day: dt.date, name: str, amount: Decimal, category: str,
              merchant: str | None = None, **extra: Any) -> None:  # fmt: skip
        if day > today:
            return
        items.append(
            {
                "account_id": acc.pk,
                "date": day,
                "amount": amount,  # the ledger's sign: money out positive
                "name": name,
                "currency": acc.currency,
                "category_id": categories[category].pk if category else None,
                "merchant_id": merchants[merchant].pk if merchant else None,
                "source": "demo",
                **extra,
            }
        )

    for month in range(12):
        first = _month(start, month)
        spend(checking, first.replace(day=25), "Salary, Acme Corp", D("-4200.00"), "Salary")
        spend(checking, first, "Rent, Maple Street flat", D("1450.00"), "Rent")
        spend(checking, first.replace(day=12), "Electricity and water",
              D(rng.randint(9000, 16000)) / 100, "Utilities")  # fmt: skip
        for _ in range(7):
            name = rng.choice(MERCHANTS["Groceries"])
            spend(card, first.replace(day=rng.randint(1, 28)), name,
                  D(rng.randint(1800, 14000)) / 100, "Groceries", name)  # fmt: skip
        for _ in range(3):
            name = rng.choice(MERCHANTS["Restaurants"])
            spend(card, first.replace(day=rng.randint(1, 28)), name,
                  D(rng.randint(1200, 9000)) / 100, "Restaurants", name)  # fmt: skip
        spend(checking, first.replace(day=3), "City Transit monthly pass", D("86.00"),
              "Transport", "City Transit")  # fmt: skip
        spend(card, first.replace(day=18), "StreamFlix", D("15.99"), "Entertainment", "StreamFlix")
        if month % 4 == 2:
            spend(card, first.replace(day=9), "Sunrise Pharmacy", D("32.40"), "Health",
                  "Sunrise Pharmacy")  # fmt: skip
        if month in (6, 7):  # a summer holiday paid from the second-currency account
            for day in (4, 6, 9, 12):
                amount = D(rng.randint(6000, 24000)) / 100
                spend(abroad, first.replace(day=day), "Hotel and meals abroad", amount, "Travel",
                      tag_ids=[holiday.pk])  # fmt: skip
    transactions_bulk_create(family=family, items=sorted(items, key=lambda i: i["date"]))

    _card_payments_and_savings(family, checking, card, savings, start, today)
    _brokerage(family, brokerage, checking, start, today)
    _import(family, checking, today)
    return True


def first_month(today: dt.date) -> dt.date:
    """The first day of the year of months the demo fills: eleven months before this one,
    so that this month is the twelfth (on a 1st, 335 days back could land two months short)."""
    return _month(today, -11)


def _month(start: dt.date, offset: int) -> dt.date:
    index = start.month - 1 + offset
    return dt.date(start.year + index // 12, index % 12 + 1, 1)


def _card_payments_and_savings(
    family: Family, checking: Account, card: Account, savings: Account, start: dt.date,
    today: dt.date,
) -> None:  # fmt: skip
    """Each month: the card's balance paid from checking, and 400 moved to savings (both
    linked as transfers)."""
    for month in range(1, 13):
        day = _month(start, month).replace(day=2)
        if day > today:
            break
        spent = sum(
            t.amount
            for t in Transaction.objects.filter(
                account=card, date__lt=day, date__gte=_month(start, month - 1), amount__gt=0
            )
        )
        pairs = [(card, D(spent), "Visa card payment", "cc_payment")]
        pairs.append((savings, D("400.00"), "Monthly savings", "funds_movement"))
        for target, amount, name, kind in pairs:
            if amount <= 0:
                continue
            legs = transactions_bulk_create(
                family=family,
                items=[
                    {"account_id": checking.pk, "date": day, "amount": amount, "name": name,
                     "currency": checking.currency, "kind": kind, "source": "demo"},
                    {"account_id": target.pk, "date": day, "amount": -amount, "name": name,
                     "currency": target.currency, "kind": kind, "source": "demo"},
                ],
            )  # fmt: skip
            out, into = (r.transaction for r in legs)
            matched = Transfer.objects.filter(outflow_transaction_id=out.pk).first()
            if matched is not None:
                if matched.status == Transfer.Status.PENDING:
                    transfer_confirm(transfer=matched)
            else:
                transfer_create(
                    family=family, inflow_transaction_id=into.pk, outflow_transaction_id=out.pk
                )


def _brokerage(family: Family, brokerage: Account, checking: Account, start: dt.date,
               today: dt.date) -> None:  # fmt: skip
    """A deposit from checking, then index fund and bond purchases, priced today."""
    from trades.models import Security
    from trades.services.prices import security_price_set
    from trades.services.trades import trade_create

    trade_create(
        family=family,
        account_id=brokerage.pk,
        date=start + dt.timedelta(days=14),
        type="deposit",
        amount=D("15000.00"),
        transfer_account_id=checking.pk,
    )
    buys = [
        (30, "WORLD", "Global index fund", D("40"), D("96.20")),
        (120, "WORLD", "Global index fund", D("25"), D("101.75")),
        (200, "BONDS", "Government bond fund", D("60"), D("48.10")),
        (290, "WORLD", "Global index fund", D("20"), D("108.40")),
    ]
    for days, ticker, name, qty, price in buys:
        if start + dt.timedelta(days=days) > today:
            continue
        trade_create(
            family=family,
            account_id=brokerage.pk,
            date=start + dt.timedelta(days=days),
            type="buy",
            qty=qty,
            price=price,
            manual_ticker=ticker,
            name=f"Buy {qty} {name}",
        )
    for ticker, price in (("WORLD", D("112.30")), ("BONDS", D("49.05"))):
        security = Security.objects.filter(family=family, ticker=ticker).first()
        if security is not None:
            security_price_set(family=family, security_id=security.pk, date=today, price=price)


CSV = """date,name,amount,category
{d1},Hardware store,-64.90,Home
{d2},Bakery,-7.80,Groceries
{d3},Tax refund,312.00,
{d4},Bike repair,-45.00,Transport
"""


def _import(family: Family, checking: Account, today: dt.date) -> None:
    """A small bank CSV, uploaded and published like the wizard does."""
    from imports.models import ImportMapping
    from imports.services.mappings import import_mappings_update
    from imports.services.parse import import_create
    from imports.services.publish import import_publish, import_publish_run

    days = [today - dt.timedelta(days=n) for n in (20, 16, 11, 6)]
    body = CSV.format(**{f"d{i + 1}": d.isoformat() for i, d in enumerate(days)}).encode()
    imp = import_create(
        family=family,
        stream=io.BytesIO(body),
        filename="bank-export.csv",
        size=len(body),
        account=checking,
        configuration={},
    )
    items = [
        {"id": m.pk, "create_new": True}
        for m in ImportMapping.objects.filter(data_import=imp, target_id__isnull=True)
    ]
    if items:
        import_mappings_update(data_import=imp, items=items)
    import_publish(data_import=imp, enqueue=False)
    import_publish_run(import_id=imp.pk)
