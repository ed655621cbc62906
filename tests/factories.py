"""Factories for every ledger record. Personas: alice's household owns, charlie is a stranger."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import factory
from factory.django import DjangoModelFactory

from finance.models import Account, Category, Family, Merchant, Tag, Transaction, User


class FamilyFactory(DjangoModelFactory):
    class Meta:
        model = Family

    name = factory.Faker("last_name")
    currency = "USD"


class UserFactory(DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    family = factory.SubFactory(FamilyFactory)
    is_staff = True
    password = factory.django.Password("pw-12345-secret")


class AccountFactory(DjangoModelFactory):
    class Meta:
        model = Account

    family = factory.SubFactory(FamilyFactory)
    name = factory.Sequence(lambda n: f"Checking {n}")
    account_type = Account.Type.DEPOSITORY
    currency = "USD"


class CategoryFactory(DjangoModelFactory):
    class Meta:
        model = Category

    family = factory.SubFactory(FamilyFactory)
    name = factory.Sequence(lambda n: f"Category {n}")
    color = "#336699"
    icon = "tag"


class MerchantFactory(DjangoModelFactory):
    class Meta:
        model = Merchant

    family = factory.SubFactory(FamilyFactory)
    name = factory.Sequence(lambda n: f"Merchant {n}")


class TagFactory(DjangoModelFactory):
    class Meta:
        model = Tag

    family = factory.SubFactory(FamilyFactory)
    name = factory.Sequence(lambda n: f"tag-{n}")
    color = "#aa3355"


class TransactionFactory(DjangoModelFactory):
    class Meta:
        model = Transaction

    account = factory.SubFactory(AccountFactory)
    family = factory.SelfAttribute("account.family")
    date = factory.LazyFunction(lambda: dt.date(2024, 5, 1))
    amount = Decimal("12.50")
    currency = factory.SelfAttribute("account.currency")
    name = factory.Sequence(lambda n: f"Purchase {n}")


def ledger_derive(family: Family, account_dates: dict) -> None:
    """Derive balances and pairs for rows a factory wrote straight to the table (test setup:
    the service paths derive them when their ledger batch closes)."""
    from finance.ledger import ledger_batch

    with ledger_batch(family=family) as batch:
        for account_id, date in account_dates.items():
            batch.touch(family, account_id, date)
