"""`manage.py demo` (run by `make run`): the demo household gets a realistic year, once, through
the services; DEMO_DATA=false leaves it empty."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client

from finance.demo_data import first_month
from finance.management.commands.demo import DEMO_EMAIL
from finance.models import Account, Transaction, Transfer, User
from imports.models import Import
from trades.models import Holding


def _demo() -> str:
    out = io.StringIO()
    call_command("demo", stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_demo_household_gets_a_year_once():
    assert "a year of accounts" in _demo()
    family = User.objects.get(email=DEMO_EMAIL).family
    accounts = Account.objects.filter(family=family)
    assert {a.currency for a in accounts} == {"USD", "EUR"}
    assert accounts.filter(account_type="investment").exists()
    assert Holding.objects.filter(account__family=family, qty__gt=0).count() == 2
    txns = Transaction.objects.filter(family=family)
    assert txns.count() > 200 and txns.filter(category__isnull=False).count() > 150
    first, last = txns.order_by("date").first().date, txns.order_by("date").last().date
    assert (last - first).days > 300
    assert Transfer.objects.filter(family=family, status="confirmed").count() >= 12
    assert Import.objects.get(family=family).status == "complete"

    before = txns.count()
    assert "a year of accounts" not in _demo()  # a second run adds nothing
    assert Transaction.objects.filter(family=family).count() == before

    browser = Client()
    browser.force_login(User.objects.get(email=DEMO_EMAIL))
    html = browser.get("/admin/").content.decode()
    assert "No data yet" not in html and "Nothing spent yet" not in html
    assert "Not counted" not in html  # the second currency has its rates


@pytest.mark.django_db(transaction=True)
def test_demo_data_false_leaves_the_household_empty(settings):
    settings.DEMO_DATA = False
    _demo()
    family = User.objects.get(email=DEMO_EMAIL).family
    assert not Account.objects.filter(family=family).exists()


def test_the_demo_year_ends_with_this_month_on_every_day():
    """Twelve months, the last of them today's, whichever day the demo is made (on
    1 December it started with December of the year before and left this month empty)."""
    import datetime as dt

    day = dt.date(2026, 1, 1)
    while day.year < 2029:
        start = first_month(day)
        assert start.day == 1
        assert (start.year * 12 + start.month) + 11 == day.year * 12 + day.month, day
        day += dt.timedelta(days=1)
