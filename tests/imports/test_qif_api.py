"""QIF over HTTP: a US bank export (apostrophe years, categories, classes, splits, transfers)
and a UK file with two accounts (day-first dates), mapped by name; fingerprints with
occurrence numbers as ids, re-import creating nothing, exact revert."""

from __future__ import annotations

import pytest

from finance.models import Category, Tag, Transaction
from tests.conftest import assert_error
from tests.imports.statement_helpers import (
    account_state,
    fixture,
    mappings,
    publish,
    published_rows,
    readback,
    revert,
    rows,
    uploaded,
)

pytestmark = pytest.mark.django_db


def test_us_qif_rows_categories_classes_splits(alice, django_capture_on_commit_callbacks):
    account = alice.account(name="Checking", currency="USD")
    before = account_state(account)
    data = uploaded(
        alice.client,
        fixture("qif_us_checking.qif"),
        "checking.qif",
        "QifImport",
        account_id=str(account.pk),
    )
    assert data["type"] == "QifImport"
    assert data["configuration"]["date_format"] == "%m/%d/%Y"  # QIF is read month first
    listed = rows(alice.client, data["id"])
    got = [
        (r["row_number"], r["date"], r["amount"], r["name"], r["category"], r["tags"], r["notes"])
        for r in listed
    ]
    assert got == [
        (2, "2024-01-02", "-1000.00", "Opening Balance", None, [], "Transfer [Checking]"),
        (7, "2024-01-15", "45.20", "Whole Foods Market", "Food:Groceries", [], "Weekly groceries"),
        (14, "2024-01-15", "3.50", "Blue Bottle Coffee", "Food:Coffee", ["Business"], None),
        (19, "2024-01-15", "3.50", "Blue Bottle Coffee", "Food:Coffee", ["Business"], None),
        (24, "2024-01-31", "-2500.00", "ACME Corp", "Salary", [], None),
        (
            30,
            "2024-02-01",
            "145.20",
            "Target",
            None,
            [],
            "Splits: Household -100.00; Food:Groceries -45.20",
        ),
        (39, "2024-02-03", "500.00", "To savings", None, [], "Transfer [Savings]"),
        (45, "1999-12-31", "1.00", "Old fee", "Bank Charges", [], None),
    ]
    # No ids in QIF: the content fingerprint with its occurrence number, as CSV rows.
    coffee = [r for r in listed if r["name"] == "Blue Bottle Coffee"]
    assert [r["occurrence"] for r in coffee] == [1, 2]
    assert coffee[0]["fingerprint"].startswith("csv:")
    assert coffee[0]["fingerprint"] != coffee[1]["fingerprint"]
    assert listed[0]["raw"] == {
        "D": "1/02'24",
        "T": "1,000.00",
        "P": "Opening Balance",
        "M": "",
        "L": "[Checking]",
        "N": "",
        "C": "",
        "S": "",
    }
    maps = mappings(alice.client, data["id"])
    assert {value for kind, value in maps if kind == "category"} == {
        "Food:Groceries",
        "Food:Coffee",
        "Salary",
        "Bank Charges",
    }
    assert maps[("tag", "Business")]["create_new"] is True
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert readback(done)["status"] == "matched", readback(done)
    assert readback(done)["statements"][0]["status"] == "unchecked"  # QIF has no balances
    assert done["reported_balances"] == []
    coffee_txn = Transaction.objects.filter(account=account, name="Blue Bottle Coffee").first()
    assert coffee_txn.category.name == "Food:Coffee"
    assert list(coffee_txn.tags.values_list("name", flat=True)) == ["Business"]
    assert {t[3] for t in published_rows(account)} == {"import"}

    again = uploaded(
        alice.client,
        fixture("qif_us_checking.qif"),
        "c.qif",
        "QifImport",
        account_id=str(account.pk),
    )
    assert again["stats"]["duplicates_count"] == 8
    revert(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert account_state(account) == before
    assert not Category.objects.filter(family=alice.family).exists()
    assert not Tag.objects.filter(family=alice.family).exists()


def test_uk_qif_two_accounts_mapped_by_name_day_first(alice, django_capture_on_commit_callbacks):
    current = alice.account(name="Current Account", currency="GBP")
    visa = alice.account(name="Visa Card", currency="GBP")
    data = uploaded(
        alice.client,
        fixture("qif_uk_two_accounts.qif"),
        "export.qif",
        "QifImport",
        date_format="%d/%m/%Y",
    )
    maps = mappings(alice.client, data["id"])
    # Statement accounts named like ledger accounts map to them.
    assert maps[("account", "Current Account")]["target_id"] == str(current.pk)
    assert maps[("account", "Visa Card")]["target_id"] == str(visa.pk)
    listed = rows(alice.client, data["id"])
    assert [(r["row_number"], r["date"], r["amount"], r["account"]) for r in listed] == [
        (15, "2024-01-15", "1234.56", "Current Account"),
        (20, "2024-01-31", "-2750.00", "Current Account"),
        (25, "2004-02-05", "12.00", "Current Account"),
        (35, "2024-02-03", "42.10", "Visa Card"),
        (41, "2024-02-10", "19.99", "Visa Card"),
        (46, "2024-02-29", "-500.00", "Visa Card"),
        (51, None, "5.00", "Visa Card"),
    ]
    assert listed[-1]["errors"] == [
        "line 51, D: value '30/02/2024' is not a real date (read as day/month/year)"
    ]
    resp = alice.client.post(f"/api/v1/imports/{data['id']}/publish")
    assert "invalid" in assert_error(resp, 409, "conflict")["message"]
    alice.client.patch(f"/api/v1/imports/{data['id']}/rows/51", {"skip": True}, format="json")
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert readback(done)["status"] == "matched"
    assert [t[:3] for t in published_rows(visa)] == [
        ("2024-02-03", "42.10", "Tesco Stores"),
        ("2024-02-10", "19.99", "Netflix"),
        ("2024-02-29", "-500.00", "Payment received"),
    ]
    assert Transaction.objects.filter(account=current).count() == 3


def test_qif_reconfigured_month_first_reparses(alice):
    account = alice.account(currency="GBP")
    data = uploaded(
        alice.client,
        fixture("qif_uk_two_accounts.qif"),
        "export.qif",
        "QifImport",
        account_id=str(account.pk),
    )
    # Read month first, 15/01/2024, 31/01'24, 29/02/2024 and 30/02/2024 are not dates.
    assert data["stats"]["invalid_rows_count"] == 4
    resp = alice.client.patch(
        f"/api/v1/imports/{data['id']}", {"date_format": "%d/%m/%Y"}, format="json"
    )
    assert resp.status_code == 200, resp.content
    assert resp.json()["data"]["stats"]["invalid_rows_count"] == 1
