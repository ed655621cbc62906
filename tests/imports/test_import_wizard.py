"""The import wizard in the admin: upload with a configuration, review rows with their errors
and duplicates, resolve mappings, publish with readback, revert; scoped to the household."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from finance.models import Category, Transaction, User
from finance.services.households import household_permissions_grant
from imports.models import Import, ImportMapping
from tests.factories import AccountFactory, CategoryFactory, TransactionFactory

ADD = reverse("admin:imports_import_add")
CSV = (
    b"Date;Label;Value;Kind\n"
    b"01/03/2026;Bakery;-4,50;Food\n"
    b"02/03/2026;Salary;2.500,00;Income\n"
    b"03/03/2026;Broken row;abc;Food\n"
    b"04/03/2026;Rent;-900,00;Housing\n"
    b"05/03/2026;Cinema;-12,00;Fun\n"
)
CONFIG = {
    "date_col_label": "Date",
    "name_col_label": "Label",
    "amount_col_label": "Value",
    "category_col_label": "Kind",
    "tags_col_label": "tags",
    "notes_col_label": "notes",
    "account_col_label": "account",
    "currency_col_label": "currency",
    "date_format": "%d/%m/%Y",
    "number_format": "1.234,56",
    "signage_convention": "inflows_positive",
    "col_sep": ";",
    "rows_to_skip": "0",
}


def client_for(household) -> Client:
    household_permissions_grant(user=household.user)
    client = Client()
    client.force_login(household.user)
    return client


@pytest.fixture
def account(alice):
    account = AccountFactory(family=alice.family, name="Girokonto", currency="EUR")
    # the rent is already in the ledger: its row is a duplicate
    TransactionFactory(
        account=account,
        name="Rent",
        amount=Decimal("900"),
        date=dt.date(2026, 3, 4),
        currency="EUR",
    )
    return account


def upload(client, account, content=CSV, **overrides):
    data = {**CONFIG, **overrides, "account": str(account.pk) if account else ""}
    data["file"] = SimpleUploadedFile("bank.csv", content, content_type="text/csv")
    return client.post(ADD, data)


def uploaded(alice, account) -> tuple[Client, Import]:
    client = client_for(alice)
    response = upload(client, account)
    assert response.status_code == 302, response.content.decode()[:2000]
    return client, Import.objects.get(family=alice.family)


def page(client, imp, **query) -> str:
    response = client.get(reverse("admin:imports_import_change", args=[imp.pk]), query)
    assert response.status_code == 200
    return response.content.decode()


def test_upload_then_review_shows_counts_errors_and_duplicates(alice, account):
    assert client_for(alice).get(ADD).status_code == 200
    client, imp = uploaded(alice, account)
    text = page(client, imp)
    assert 'id="invalid-count">1<' in text and 'id="duplicate-count">1<' in text
    assert "Broken row" in text and "invalid" in text and "duplicate" in text
    assert "1 row is invalid" in text  # the blocker is said, in the singular
    only_errors = page(client, imp, rows="invalid")
    assert "Broken row" in only_errors and "Bakery" not in only_errors


@pytest.mark.parametrize(
    ("content", "overrides"),
    [
        (b"Wrong;Headers\n1;2\n", {}),
        (CSV, {"date_col_label": "Missing column"}),
        (b"", {}),
        (b"\x00\x01\x02binary", {}),
    ],
)
def test_a_bad_file_or_configuration_is_a_form_error_and_leaves_nothing(
    alice, account, content, overrides
):
    response = upload(client_for(alice), account, content, **overrides)
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert not Import.objects.exists()


def test_mappings_publish_readback_and_revert(alice, account, django_capture_on_commit_callbacks):
    food = CategoryFactory(family=alice.family, name="Groceries")
    client, imp = uploaded(alice, account)
    mappings = {m.value: m for m in ImportMapping.objects.filter(data_import=imp, kind="category")}
    client.post(
        reverse("admin:imports_import_mappings", args=[imp.pk]),
        {
            f"mapping-{mappings['Food'].pk}": str(food.pk),
            f"mapping-{mappings['Fun'].pk}": "new",
            f"mapping-{mappings['Income'].pk}": "",
            f"mapping-{mappings['Housing'].pk}": "new",
        },
    )
    mappings["Food"].refresh_from_db()
    assert mappings["Food"].target_id == food.pk

    publish = reverse("admin:imports_import_publish", args=[imp.pk])
    blocked = client.post(publish, follow=True).content.decode()
    assert "invalid" in blocked and not Transaction.objects.filter(import_id=imp.pk).exists()
    client.post(reverse("admin:imports_import_skip_invalid", args=[imp.pk]))
    with django_capture_on_commit_callbacks(execute=True):
        client.post(publish)
    imp.refresh_from_db()
    assert imp.status == "complete"
    created = Transaction.objects.filter(import_id=imp.pk)
    assert set(created.values_list("name", flat=True)) == {"Bakery", "Salary", "Cinema"}
    assert created.get(name="Bakery").category == food
    assert created.get(name="Salary").category is None
    assert Category.objects.filter(family=alice.family, name="Fun").exists()
    account.refresh_from_db()
    assert account.balance == Decimal("2500") - Decimal("4.5") - Decimal("12") - Decimal("900")
    text = page(client, imp)
    assert 'id="readback-status">Matched<' in text

    status = client.get(reverse("admin:imports_import_status", args=[imp.pk])).json()
    assert status["status"] == "complete" and status["readback"] == "matched"

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:imports_import_revert", args=[imp.pk]))
    imp.refresh_from_db()
    assert imp.status == "pending" and imp.reverted_at is not None
    assert not Transaction.objects.filter(import_id=imp.pk).exists()


def test_reconfigure_parses_again(alice, account):
    client, imp = uploaded(alice, account)
    data = {**CONFIG, "amount_col_label": "Nope"}
    client.post(reverse("admin:imports_import_configure", args=[imp.pk]), data, follow=True)
    imp.refresh_from_db()
    assert imp.configuration["amount_col_label"] == "Value"  # refused: the column is missing
    data = {**CONFIG, "signage_convention": "inflows_negative"}
    client.post(reverse("admin:imports_import_configure", args=[imp.pk]), data)
    imp.refresh_from_db()
    assert imp.configuration["signage_convention"] == "inflows_negative"


def test_another_household_gets_404_everywhere(alice, charlie, account):
    _, imp = uploaded(alice, account)
    client = client_for(charlie)
    for name in ("mappings", "configure", "skip_invalid", "publish", "revert"):
        assert (
            client.post(reverse(f"admin:imports_import_{name}", args=[imp.pk])).status_code == 404
        )
    assert client.get(reverse("admin:imports_import_status", args=[imp.pk])).status_code == 404
    assert client.get(reverse("admin:imports_import_change", args=[imp.pk])).status_code in (
        302,
        404,
    )
    assert "bank.csv" not in client.get(reverse("admin:imports_import_changelist")).content.decode()
    imp.refresh_from_db()
    assert imp.status == "pending"


def test_posts_need_csrf(alice, account):
    _, imp = uploaded(alice, account)
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice.user)
    assert client.post(reverse("admin:imports_import_publish", args=[imp.pk])).status_code == 403


def test_superuser_filters_imports_by_household(alice, charlie, account):
    uploaded(alice, account)
    root = User.objects.create_superuser(email="root@example.com", password="x")
    client = Client()
    client.force_login(root)
    listing = reverse("admin:imports_import_changelist")
    text = client.get(listing).content.decode()
    assert "By household" in text and "bank.csv" in text
    assert (
        "bank.csv"
        not in client.get(listing, {"household": str(charlie.family.pk)}).content.decode()
    )
