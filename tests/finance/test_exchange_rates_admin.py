"""Exchange rates in the admin: a household adds and edits its own rates, checked as the API
checks them; staff see system rates too."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client

from finance.admin_fx import DUPLICATE
from finance.models import ExchangeRate, User
from finance.services.households import household_permissions_grant

URL = "/admin/finance/exchangerate/"


def _browser(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def _form(**fields):
    data = {"date": "2024-05-01", "from_currency": "EUR", "to_currency": "USD", "rate": "1.1"}
    data.update(fields)
    return data


@pytest.mark.django_db
def test_a_household_adds_edits_and_sees_only_its_own_rates(alice, charlie):
    system = ExchangeRate.objects.create(
        date="2024-05-01", from_currency="EUR", to_currency="USD", rate=1, source="ecb"
    )
    theirs = ExchangeRate.objects.create(
        family=charlie.family, date="2024-05-01", from_currency="EUR", to_currency="GBP", rate=2
    )
    household_permissions_grant(user=alice.user)
    browser = _browser(alice.user)

    r = browser.post(f"{URL}add/", _form(from_currency="eur", rate="1.1234"))
    assert r.status_code == 302, r.content.decode()[:2000]
    mine = ExchangeRate.objects.get(family=alice.family)
    assert (mine.from_currency, mine.rate, mine.source) == ("EUR", Decimal("1.1234"), "household")

    r = browser.post(f"{URL}add/", _form())  # the same day and pair again
    assert r.status_code == 200 and DUPLICATE in r.content.decode()
    for bad in (
        {"from_currency": "EURO"},
        {"to_currency": "EUR"},
        {"rate": "0"},
        {"rate": "1000000000000"},
        {"date": "1899-12-31"},
    ):
        r = browser.post(f"{URL}add/", _form(**{"date": "2024-05-02", **bad}))
        assert r.status_code == 200 and "errorlist" in r.content.decode(), bad
    assert ExchangeRate.objects.filter(family=alice.family).count() == 1

    r = browser.post(f"{URL}{mine.pk}/change/", _form(rate="1.2"))
    assert r.status_code == 302
    mine.refresh_from_db()
    assert mine.rate == Decimal("1.2")

    listing = browser.get(URL).content.decode()
    assert str(mine.pk) in listing
    assert str(system.pk) not in listing and str(theirs.pk) not in listing
    assert browser.get(f"{URL}{system.pk}/change/").status_code in (302, 404)


@pytest.mark.django_db
def test_staff_see_and_add_system_rates(alice):
    ExchangeRate.objects.create(
        family=alice.family, date="2024-05-01", from_currency="EUR", to_currency="USD", rate=3
    )
    root = User.objects.create_superuser(email="root@example.com", password="x")
    browser = _browser(root)
    r = browser.post(f"{URL}add/", _form(family=""))
    assert r.status_code == 302, r.content.decode()[:2000]
    system = ExchangeRate.objects.get(family__isnull=True)
    assert system.source == "manual" and system.rate == Decimal("1.1")
    r = browser.post(f"{URL}add/", _form(family=""))
    assert r.status_code == 200 and DUPLICATE in r.content.decode()
    assert ExchangeRate.objects.count() == 2
    assert browser.get(URL).status_code == 200
