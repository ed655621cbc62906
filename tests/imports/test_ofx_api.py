"""OFX over HTTP: OFX 1.02 (SGML, Windows-1252), OFX 2.1.1 (XML) credit card, and a QFX with
two statements written on one line. Rows read back one by one, publish with readback, the
closing balance as the reported balance, re-import creating nothing, exact revert."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from finance.models import Account, Transaction
from tests.imports.statement_helpers import (
    account_state,
    fixture,
    map_accounts,
    mappings,
    publish,
    published_rows,
    readback,
    revert,
    rows,
    uploaded,
)

pytestmark = pytest.mark.django_db


def test_ofx1_sgml_rows_publish_reimport_and_exact_revert(
    alice, django_capture_on_commit_callbacks
):
    account = alice.account(name="Checking", currency="USD")
    before = account_state(account)
    data = uploaded(
        alice.client,
        fixture("ofx102_checking.ofx"),
        "statement.ofx",
        "OfxImport",
        account_id=str(account.pk),
    )
    assert (data["type"], data["status"], data["encoding"]) == ("OfxImport", "pending", "cp1252")
    assert data["status_detail"]["publishable"] is True
    got = [
        (r["row_number"], r["date"], r["amount"], r["currency"], r["name"], r["notes"])
        for r in rows(alice.client, data["id"])
    ]
    # OFX amounts are the holder's view (a debit is negative); the ledger's sign is the opposite.
    assert got == [
        (44, "2024-01-03", "45.20", "USD", "WHOLE FOODS MKT #123", "POS PURCHASE CARD 1234"),
        (53, "2024-01-05", "-2500.00", "USD", "ACME CORP PAYROLL", None),
        (60, "2024-01-10", "1100.00", "USD", "Check 1042", None),
        (67, "2024-01-12", "3.50", "USD", "Café Olé & Co", None),
        (75, "2024-01-12", "3.50", "USD", "Café Olé & Co", None),
        (82, "2024-01-31", "12.00", "USD", "MONTHLY SERVICE FEE", None),
    ]
    first = rows(alice.client, data["id"])[0]
    assert first["fingerprint"] == "202401030001"
    assert first["raw"]["FITID"] == "202401030001"
    assert first["raw"]["DTPOSTED"] == "20240103120000.000[-5:EST]"

    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert done["status"] == "complete", done
    check = readback(done)
    assert check["status"] == "matched", check
    assert check["checked_counts"]["transactions"] == 6
    # OFX gives no opening balance: the closing one is shown but cannot be checked.
    assert check["statements"] == [
        {
            "number": 1,
            "account": "000012345678",
            "account_id": str(account.pk),
            "currency": "USD",
            "opening_balance": None,
            "closing_balance": "3839.3",
            "closing_date": "2024-01-31",
            "entries": 6,
            "entries_total": "1335.8",
            "computed_closing": None,
            "status": "unchecked",
        }
    ]
    assert published_rows(account)[:2] == [
        ("2024-01-03", "45.20", "WHOLE FOODS MKT #123", "ofx", "202401030001"),
        ("2024-01-05", "-2500.00", "ACME CORP PAYROLL", "ofx", "202401050002"),
    ]
    # The two identical café rows are two transactions (their FITIDs differ).
    assert Transaction.objects.filter(account=account, name="Café Olé & Co").count() == 2
    account.refresh_from_db()
    assert account.reported_balance == Decimal("3839.30")
    assert timezone.localdate(account.reported_balance_at) == dt.date(2024, 1, 31)
    assert done["reported_balances"] == [
        {"account_id": str(account.pk), "balance": "3839.30", "as_of": "2024-01-31", "statement": 1}
    ]
    after_first = account_state(account)

    again = uploaded(
        alice.client,
        fixture("ofx102_checking.ofx"),
        "s.ofx",
        "OfxImport",
        account_id=str(account.pk),
    )
    assert again["stats"]["duplicates_count"] == 6
    listed = alice.client.get("/api/v1/imports", {"type": "OfxImport"}).json()["data"]
    assert {i["id"] for i in listed} == {data["id"], again["id"]}
    assert alice.client.get("/api/v1/imports", {"type": "QifImport"}).json()["data"] == []
    second = publish(alice.client, again["id"], django_capture_on_commit_callbacks)
    assert readback(second)["checked_counts"]["transactions"] == 0
    assert account_state(account)[0] == after_first[0]

    revert(alice.client, again["id"], django_capture_on_commit_callbacks)
    reverted = revert(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert reverted["status"] == "pending"
    assert readback(reverted)["status"] == "reverted"
    assert account_state(account) == before


def test_ofx2_xml_credit_card_signs_and_owed_balance(alice, django_capture_on_commit_callbacks):
    card = alice.account(name="Visa", currency="USD", account_type=Account.Type.CREDIT_CARD)
    resp = alice.client.post(
        "/api/v1/imports",
        {
            "type": "OfxImport",
            "raw_file_content": fixture("ofx211_creditcard.ofx").decode(),
            "account_id": str(card.pk),
        },
        format="json",
    )
    assert resp.status_code == 201, resp.content
    data = resp.json()["data"]
    got = [(r["date"], r["amount"], r["name"], r["notes"]) for r in rows(alice.client, data["id"])]
    assert got == [
        ("2024-02-03", "89.99", "AMAZON MKTPLACE PMTS", "AMZN.COM/BILL WA"),
        ("2024-02-10", "64.15", "SHELL OIL 57444", None),
        ("2024-02-15", "-25.00", "RETURN: TARGET T-1234", None),
        ("2024-02-20", "-500.00", "PAYMENT - THANK YOU", None),
        ("2024-02-29", "2.50", "FOREIGN TRANSACTION FEE", "3% of EUR 76.90 <Paris>"),
    ]
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert readback(done)["status"] == "matched"
    card.refresh_from_db()
    # LEDGERBAL -1231.64 on a card is money owed: a liability's balance of 1231.64.
    assert card.reported_balance == Decimal("1231.64")
    assert card.balance == Decimal("1231.64")


def test_qfx_on_one_line_two_statements_mapped_to_two_accounts(
    alice, django_capture_on_commit_callbacks
):
    checking = alice.account(name="Joint checking", currency="USD")
    savings = alice.account(name="Savings", currency="USD")
    content = fixture("qfx_two_accounts_one_line.qfx")
    data = uploaded(alice.client, content, "export.qfx", "OfxImport")
    maps = mappings(alice.client, data["id"])
    assert set(maps) == {("account", "9876543210"), ("account", "9876543299")}
    assert data["status_detail"]["publishable"] is False
    listed = rows(alice.client, data["id"])
    # One line holds every entry: rows take the next free numbers after it.
    assert [(r["row_number"], r["account"], r["amount"]) for r in listed] == [
        (11, "9876543210", "300.00"),
        (12, "9876543210", "60.00"),
        (13, "9876543210", None),
        (14, "9876543299", "-300.00"),
        (15, "9876543299", "-4.12"),
    ]
    assert listed[2]["valid"] is False
    assert listed[2]["errors"] == ["line 11, TRNAMT: value '1,250.00' is not a number"]
    map_accounts(alice.client, data["id"], {"9876543210": checking, "9876543299": savings})
    skip = alice.client.patch(
        f"/api/v1/imports/{data['id']}/rows/13", {"skip": True}, format="json"
    )
    assert skip.status_code == 200, skip.content
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert readback(done)["status"] == "matched", readback(done)
    assert published_rows(checking) == [
        ("2024-03-01", "300.00", "Transfer to savings", "ofx", "T-0301-1"),
        ("2024-03-05", "60.00", "ATM WITHDRAWAL 0042", "ofx", "T-0305-1"),
    ]
    # The same FITID in two accounts is two transactions (ids are per account).
    assert published_rows(savings) == [
        ("2024-03-01", "-300.00", "Transfer from checking", "ofx", "T-0301-1"),
        ("2024-03-31", "-4.12", "INTEREST PAID", "ofx", "S-0331-INT"),
    ]
    checking.refresh_from_db()
    savings.refresh_from_db()
    assert (checking.reported_balance, savings.reported_balance) == (
        Decimal("2890.00"),
        Decimal("10304.12"),
    )
    # A later import of the same accounts maps them as before, and creates nothing new.
    again = uploaded(alice.client, content, "export.qfx", "OfxImport")
    maps = mappings(alice.client, again["id"])
    assert maps[("account", "9876543210")]["target_id"] == str(checking.pk)
    assert maps[("account", "9876543299")]["target_id"] == str(savings.pk)
    assert again["stats"]["duplicates_count"] == 4
    assert Transaction.objects.filter(family=alice.family).count() == 4


def test_set_balance_off_and_provider_linked_accounts_keep_their_balance(
    alice, django_capture_on_commit_callbacks
):
    from tests.providers.factories import ProviderAccountFactory

    manual = alice.account(name="Manual", currency="USD")
    linked = alice.account(name="Linked", currency="USD")
    ProviderAccountFactory(connection__family=alice.family, account=linked)
    for account, option in ((manual, "false"), (linked, "auto")):
        data = uploaded(
            alice.client,
            fixture("ofx102_checking.ofx"),
            "s.ofx",
            "OfxImport",
            account_id=str(account.pk),
            set_balance=option,
        )
        assert data["configuration"]["set_balance"] == option
        done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
        assert done["reported_balances"] == []
        account.refresh_from_db()
        assert account.reported_balance is None
    forced = uploaded(
        alice.client,
        fixture("ofx211_creditcard.ofx"),
        "cc.ofx",
        "OfxImport",
        account_id=str(linked.pk),
        set_balance="true",
    )
    publish(alice.client, forced["id"], django_capture_on_commit_callbacks)
    linked.refresh_from_db()
    assert linked.reported_balance == Decimal("-1231.64")  # an asset account: as the file says
