"""Factories of trades records. A SecurityFactory with a family is that household's manual
security; without one (family=None) it is shared reference data."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import factory
from factory.django import DjangoModelFactory

from finance.models import Account
from tests.factories import AccountFactory
from trades.models import Holding, Security, SecurityPrice, Trade


class SecurityFactory(DjangoModelFactory):
    class Meta:
        model = Security

    ticker = factory.Sequence(lambda n: f"SEC{n}")
    name = factory.Sequence(lambda n: f"Security {n}")
    manual = factory.LazyAttribute(lambda o: o.family is not None)
    family = None


class TradeFactory(DjangoModelFactory):
    class Meta:
        model = Trade

    account = factory.SubFactory(AccountFactory, account_type=Account.Type.INVESTMENT)
    family = factory.SelfAttribute("account.family")
    security = factory.SubFactory(SecurityFactory, family=factory.SelfAttribute("..family"))
    kind = Trade.Kind.BUY
    date = factory.LazyFunction(lambda: dt.date(2024, 5, 1))
    qty = Decimal(2)
    price = Decimal(10)
    amount = Decimal(20)
    currency = factory.SelfAttribute("account.currency")
    name = factory.LazyAttribute(lambda o: f"Buy 2 {o.security.ticker}")
    investment_activity_label = "Buy"


class HoldingFactory(DjangoModelFactory):
    class Meta:
        model = Holding

    account = factory.SubFactory(AccountFactory, account_type=Account.Type.INVESTMENT)
    family = factory.SelfAttribute("account.family")
    security = factory.SubFactory(SecurityFactory, family=factory.SelfAttribute("..family"))
    qty = Decimal(2)
    price = Decimal(10)
    market_value = Decimal(20)
    cost_basis = Decimal(20)
    currency = factory.SelfAttribute("account.currency")
    date = factory.LazyFunction(lambda: dt.date(2024, 5, 1))


class SecurityPriceFactory(DjangoModelFactory):
    class Meta:
        model = SecurityPrice

    security = factory.SubFactory(SecurityFactory, family=factory.SelfAttribute("..family"))
    date = factory.LazyFunction(lambda: dt.date(2024, 5, 1))
    price = Decimal(10)
    currency = "USD"
    source = SecurityPrice.Source.API
