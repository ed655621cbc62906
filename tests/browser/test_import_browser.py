"""The import wizard in a real browser: upload, see the rows with the error, resolve a mapping,
skip the invalid row, publish, read the readback, see the transactions, revert."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from finance.models import Transaction
from finance.services.households import household_permissions_grant
from imports.models import Import
from tests.browser.conftest import login, shot
from tests.factories import AccountFactory, CategoryFactory, UserFactory

CSV = (
    "date,name,amount,category\n"
    "2026-03-01,Bakery,-4.50,Food\n"
    "2026-03-02,Salary,2500.00,Income\n"
    "2026-03-03,Broken row,not-a-number,Food\n"
    "2026-03-05,Cinema,-12.00,Fun\n"
)


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_import_from_upload_to_revert(page, live_server, tmp_path):
    user = UserFactory(email="alice@example.com", family__name="Alice household")
    household_permissions_grant(user=user)
    account = AccountFactory(family=user.family, name="Everyday", currency="USD")
    groceries = CategoryFactory(family=user.family, name="Groceries")
    csv_path = tmp_path / "bank-export.csv"
    csv_path.write_text(CSV)

    login(page, live_server, user.email)
    page.goto(f"{live_server.url}{reverse('admin:imports_import_add')}")
    page.set_input_files("#id_file", str(csv_path))
    # the column fields become choices among the file's own header names
    page.wait_for_selector("select#id_amount_col_label")
    assert page.locator("select#id_amount_col_label").input_value() == "amount"
    assert page.locator("select#id_notes_col_label").input_value() == ""  # no such column
    page.select_option("#id_account", str(account.pk))
    shot(page, "import-1-upload")
    page.click("#upload")
    page.wait_for_selector("#import-review")
    assert page.locator("#invalid-count").inner_text() == "1"
    assert "Broken row" in page.locator("#import-rows").inner_text()
    assert page.locator("#publish").is_disabled()
    shot(page, "import-2-review")

    page.select_option("select[data-value='Food']", str(groceries.pk))
    page.click("#save-mappings")
    page.wait_for_selector("text=Mappings saved.")
    page.click("#skip-invalid")
    page.wait_for_selector("text=Invalid rows skipped.")
    assert page.locator("#to-create").inner_text() == "3"
    shot(page, "import-3-ready")

    page.click("#publish")
    page.wait_for_selector("#readback-status:has-text('matched')")
    assert page.locator("#import-status").inner_text() in ("Published", "complete")
    shot(page, "import-4-published")
    imp = Import.objects.get(family=user.family)
    assert Transaction.objects.filter(import_id=imp.pk).count() == 3
    assert Transaction.objects.get(name="Bakery").category == groceries

    page.goto(f"{live_server.url}{reverse('admin:finance_account_change', args=[account.pk])}")
    assert "Cinema" in page.locator("#latest-transactions").inner_text()
    account.refresh_from_db()
    assert account.balance == Decimal("2483.50")
    shot(page, "import-5-account")

    page.goto(f"{live_server.url}{reverse('admin:imports_import_change', args=[imp.pk])}")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#revert")
    page.wait_for_selector("text=Revert started.")
    page.wait_for_selector('#import-status:text-matches("pending|Ready to publish", "i")')
    shot(page, "import-6-reverted")
    assert not Transaction.objects.filter(import_id=imp.pk).exists()
    page.goto(f"{live_server.url}{reverse('admin:finance_account_change', args=[account.pk])}")
    assert "Cinema" not in page.locator("#latest-transactions").inner_text()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_statement_file_two_accounts_from_upload_to_revert(page, live_server, tmp_path):
    """A CAMT.053 file with two accounts: recognised, its statements shown and mapped,
    published with each statement's balance checked, reverted."""
    from tests.imports.statement_helpers import fixture

    user = UserFactory(email="erika@example.com", family__name="Erika household")
    household_permissions_grant(user=user)
    courant = AccountFactory(family=user.family, name="Compte courant", currency="EUR")
    livret = AccountFactory(family=user.family, name="Livret", currency="EUR")
    path = tmp_path / "releve.xml"
    path.write_bytes(fixture("camt053_v08_two_accounts.xml"))

    login(page, live_server, user.email)
    page.goto(f"{live_server.url}{reverse('admin:imports_import_add')}")
    page.set_input_files("#id_file", str(path))
    page.click("#upload")
    page.wait_for_selector("#import-statements")
    statements = page.locator("#import-statements").inner_text()
    assert "FR7630006000011234567890189" in statements
    assert statements.count("not mapped") == 2
    assert page.locator("#publish").is_disabled()
    shot(page, "statement-1-statements")

    page.select_option("select[data-value='FR7630006000011234567890189']", str(courant.pk))
    page.select_option("select[data-value='FR7630006000019876543210112']", str(livret.pk))
    page.click("#save-mappings")
    page.wait_for_selector("text=Mappings saved.")
    assert "not mapped" not in page.locator("#import-statements").inner_text()
    page.click("#publish")
    page.wait_for_selector("#readback-status:has-text('matched')")
    assert page.locator("#readback-statements").inner_text().lower().count("matched") == 2
    assert (
        "Livret: balance 350.00 as of 2024-03-31" in page.locator("#import-readback").inner_text()
    )
    shot(page, "statement-2-published")
    imp = Import.objects.get(family=user.family)
    assert Transaction.objects.filter(import_id=imp.pk).count() == 5
    livret.refresh_from_db()
    assert livret.balance == Decimal("350.00")

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#revert")
    page.wait_for_selector('#import-status:text-matches("pending|Ready to publish", "i")')
    assert not Transaction.objects.filter(import_id=imp.pk).exists()
