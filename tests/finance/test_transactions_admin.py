"""The transactions list in the admin: badges and colours, filters, search, bulk actions,
inline edit, and the staff's household filter; always scoped to the household."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from finance.models import Transaction, User
from finance.services.households import household_permissions_grant
from tests.factories import (
    AccountFactory,
    CategoryFactory,
    TagFactory,
    TransactionFactory,
    ledger_derive,
)

LIST = reverse("admin:finance_transaction_changelist")
D = dt.date(2026, 3, 1)


def client_for(household) -> Client:
    household_permissions_grant(user=household.user)
    client = Client()
    client.force_login(household.user)
    return client


def names(response) -> set[str]:
    assert response.status_code == 200
    found = re.findall(r'class="field-name_display"><a [^>]*>([^<]+)<', response.content.decode())
    return {name.strip() for name in found}


@pytest.fixture
def ledger(alice):
    checking = AccountFactory(family=alice.family, name="Checking", currency="USD")
    card = AccountFactory(family=alice.family, name="Card", currency="USD")
    food = CategoryFactory(family=alice.family, name="Food")
    trip = TagFactory(family=alice.family, name="trip")
    rows = {
        "Rent": TransactionFactory(account=checking, name="Rent", amount=Decimal("900"), date=D),
        "Salary": TransactionFactory(
            account=checking, name="Salary", amount=Decimal("-2500"), date=D + dt.timedelta(5)
        ),
        "Pizza": TransactionFactory(
            account=card,
            name="Pizza",
            amount=Decimal("21.5"),
            date=D + dt.timedelta(10),
            category=food,
            pending=True,
            notes="friday",
        ),
    }
    rows["Pizza"].tags.add(trip)
    ledger_derive(alice.family, {checking.pk: None, card.pk: None})
    return {"checking": checking, "card": card, "food": food, "trip": trip, **rows}


def test_badges_and_coloured_amounts(alice, ledger):
    text = client_for(alice).get(LIST).content.decode()
    rows = re.findall(r"<tr>(?:(?!</tr>).)*</tr>", text, re.S)
    pizza_row = next(r for r in rows if "Pizza" in r)
    rent_row = next(r for r in rows if ">Rent" in r)
    assert "pf-badge-pending" in pizza_row and "pf-badge-pending" not in rent_row
    assert 'class="pf-amount-out">-900.00 USD' in rent_row
    assert 'class="pf-amount-in">+2,500.00 USD' in text
    assert "trip" in pizza_row


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, {"Rent", "Salary", "Pizza"}),
        ({"pending__exact": "1"}, {"Pizza"}),
        ({"date__gte": "2026-03-04"}, {"Salary", "Pizza"}),
        ({"date__gte": "2026-03-02", "date__lte": "2026-03-08"}, {"Salary"}),
        ({"date__lte": "not-a-date"}, {"Rent", "Salary", "Pizza"}),
        ({"q": "friday"}, {"Pizza"}),
        ({"q": "sala"}, {"Salary"}),
        ({"excluded__exact": "1"}, set()),
    ],
)
def test_filters_and_search(alice, ledger, query, expected):
    assert names(client_for(alice).get(LIST, query)) == expected


def test_related_filters(alice, ledger):
    client = client_for(alice)
    assert names(client.get(LIST, {"account__id__exact": ledger["card"].pk})) == {"Pizza"}
    assert names(client.get(LIST, {"category__id__exact": ledger["food"].pk})) == {"Pizza"}
    assert names(client.get(LIST, {"tags__id__exact": ledger["trip"].pk})) == {"Pizza"}


def act(client, action, rows, **extra):
    data = {"action": action, "_selected_action": [str(r.pk) for r in rows], **extra}
    return client.post(LIST, data, follow=True)


def test_bulk_categorise_tag_exclude_and_include(alice, ledger):
    client = client_for(alice)
    rent, salary = ledger["Rent"], ledger["Salary"]
    act(client, "categorise_selected", [rent, salary], category=str(ledger["food"].pk))
    food_rows = Transaction.objects.filter(category=ledger["food"])
    assert set(food_rows.values_list("name", flat=True)) == {"Rent", "Salary", "Pizza"}
    act(client, "tag_selected", [rent, ledger["Pizza"]], tag=str(ledger["trip"].pk))
    assert set(ledger["trip"].transactions.values_list("name", flat=True)) == {"Rent", "Pizza"}

    checking = ledger["checking"]
    checking.refresh_from_db()
    before = checking.balance
    assert before == Decimal("1600")  # 2,500 in, 900 out
    act(client, "exclude_selected", [rent])
    rent.refresh_from_db()
    checking.refresh_from_db()
    assert rent.excluded and checking.balance == Decimal("2500")
    act(client, "include_selected", [rent])
    checking.refresh_from_db()
    assert checking.balance == before


def test_bulk_refuses_another_households_category_and_tag(alice, charlie, ledger):
    client = client_for(alice)
    theirs = CategoryFactory(family=charlie.family, name="Theirs")
    their_tag = TagFactory(family=charlie.family, name="their-tag")
    response = act(client, "categorise_selected", [ledger["Rent"]], category=str(theirs.pk))
    assert response.status_code == 200
    assert not Transaction.objects.filter(category=theirs).exists()
    act(client, "tag_selected", [ledger["Rent"]], tag=str(their_tag.pk))
    assert not their_tag.transactions.exists()
    act(client, "tag_selected", [ledger["Rent"]], tag="not-a-uuid")
    assert ledger["Rent"].tags.count() == 0


def test_the_action_form_offers_only_the_households_choices(alice, charlie, ledger):
    CategoryFactory(family=charlie.family, name="Charlie secret category")
    text = client_for(alice).get(LIST).content.decode()
    assert "Food" in text and "Charlie secret category" not in text


def formset_data(rows, **changes):
    data = {
        "form-TOTAL_FORMS": str(len(rows)),
        "form-INITIAL_FORMS": str(len(rows)),
        "_save": "Save",
    }
    for i, row in enumerate(rows):
        data[f"form-{i}-id"] = str(row.pk)
        data[f"form-{i}-category"] = str(row.category_id or "")
        data[f"form-{i}-notes"] = row.notes or ""
        for key, value in changes.get(row.name, {}).items():
            data[f"form-{i}-{key}"] = value
    return data


def list_rows(client):
    # the formset's order is the changelist's order
    return list(Transaction.objects.order_by("-date", "-id"))


def test_inline_edit_saves_category_and_notes(alice, ledger):
    client = client_for(alice)
    rows = list_rows(client)
    data = formset_data(rows, Rent={"category": str(ledger["food"].pk), "notes": "march rent"})
    response = client.post(LIST, data)
    assert response.status_code == 302
    ledger["Rent"].refresh_from_db()
    assert ledger["Rent"].category == ledger["food"] and ledger["Rent"].notes == "march rent"


def test_inline_edit_refuses_a_foreign_category_even_for_a_superuser(alice, charlie, ledger):
    theirs = CategoryFactory(family=charlie.family, name="Theirs")
    admin_user = User.objects.create_superuser(email="root@example.com", password="x")
    client = Client()
    client.force_login(admin_user)
    rows = list(Transaction.objects.order_by("-date", "-id"))
    data = formset_data(rows, Rent={"category": str(theirs.pk)})
    response = client.post(LIST, data)
    assert response.status_code == 200
    assert "belongs to another household" in response.content.decode()
    ledger["Rent"].refresh_from_db()
    assert ledger["Rent"].category is None

    household = client_for(alice)
    response = household.post(
        LIST, formset_data(list_rows(household), Rent={"category": str(theirs.pk)})
    )
    assert response.status_code == 200
    ledger["Rent"].refresh_from_db()
    assert ledger["Rent"].category is None


def test_household_user_sees_only_its_own(alice, charlie, ledger):
    other = AccountFactory(family=charlie.family, name="Charlie account")
    TransactionFactory(account=other, name="Charlie coffee")
    client = client_for(alice)
    assert "Charlie coffee" not in names(client.get(LIST))
    text = client.get(LIST).content.decode()
    assert "Charlie account" not in text and "household" not in re.findall(r"By ([a-z ]+)", text)
    # the staff's household filter does not exist for a household user
    response = client.get(LIST, {"household": str(charlie.family.pk)})
    assert response.status_code == 302 and response["Location"].endswith("?e=1")


def test_superuser_filters_by_household(alice, charlie, ledger):
    TransactionFactory(account=AccountFactory(family=charlie.family), name="Charlie coffee")
    admin_user = User.objects.create_superuser(email="root@example.com", password="x")
    client = Client()
    client.force_login(admin_user)
    everything = client.get(LIST)
    assert (
        "Charlie coffee" in everything.content.decode()
        and "By household" in everything.content.decode()
    )
    only = names(client.get(LIST, {"household": str(charlie.family.pk)}))
    assert only == {"Charlie coffee"}
    assert names(client.get(LIST, {"household": "junk"})) == set()


def test_changelist_queries_are_bounded(alice, ledger, django_assert_max_num_queries):
    for i in range(50):
        TransactionFactory(account=ledger["card"], name=f"Row {i}").tags.add(ledger["trip"])
    client = client_for(alice)
    with django_assert_max_num_queries(25):
        assert client.get(LIST).status_code == 200
