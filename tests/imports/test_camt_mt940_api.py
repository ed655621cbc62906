"""CAMT.053 (.001.02 with a batch entry, .001.08 with two accounts and a pending entry) and
MT940 (two accounts, German and Dutch details, a reversal) over HTTP: rows read back, ids,
statement balances checked in the readback (matched, and a mismatch reported), reported
balances, re-import creating nothing, exact revert."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from finance.models import Transaction
from tests.imports.statement_helpers import (
    account_state,
    fixture,
    map_accounts,
    publish,
    published_rows,
    readback,
    revert,
    rows,
    upload,
    uploaded,
)

pytestmark = pytest.mark.django_db
GIRO_IBAN = "DE89370400440532013000"


def test_camt053_v02_batch_entry_split_and_closing_balance_matched(
    alice, django_capture_on_commit_callbacks
):
    account = alice.account(name="Girokonto", currency="EUR")
    before = account_state(account)
    data = uploaded(
        alice.client,
        fixture("camt053_v02_batch.xml"),
        "camt.xml",
        "Camt053Import",
        account_id=str(account.pk),
    )
    listed = rows(alice.client, data["id"])
    got = [
        (r["row_number"], r["date"], r["amount"], r["name"], r["notes"], r["fingerprint"])
        for r in listed
    ]
    assert got == [
        (
            54,
            "2024-01-02",
            "45.20",
            "REWE Markt GmbH",
            "Kartenzahlung 02.01. 18:23 Filiale Köln Süd",
            "2024010200001234",
        ),
        (
            100,
            "2024-01-03",
            "-2500.00",
            "Muster & Söhne AG",
            "Gehalt Januar 2024",
            "2024010300005678",
        ),
        # A batch of three direct debits: one row each, with the entry's id and its position.
        (
            164,
            "2024-01-15",
            "95.00",
            "Stadtwerke Köln",
            "Abschlag Strom Januar",
            "2024011500009012/1",
        ),
        (
            183,
            "2024-01-15",
            "39.99",
            "Telekom Deutschland",
            "Rechnung 01/2024",
            "2024011500009012/2",
        ),
        (201, "2024-01-15", "52.63", "FitX", None, "2024011500009012/3"),
        # No AcctSvcrRef nor NtryRef: the content fingerprint.
        (218, "2024-01-31", "650.00", "Dauerauftrag Miete", None, listed[5]["fingerprint"]),
    ]
    assert listed[5]["fingerprint"].startswith("csv:")
    assert listed[2]["raw"]["EndToEndId"] == "STROM-0124"
    assert listed[2]["raw"]["CdtDbtInd"] == "DBIT"
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    check = readback(done)
    assert check["status"] == "matched", check
    statement = check["statements"][0]
    assert (
        statement["opening_balance"],
        statement["entries_total"],
        statement["closing_balance"],
        statement["computed_closing"],
        statement["status"],
    ) == ("1520.3", "1617.18", "3137.48", "3137.48", "matched")
    assert published_rows(account)[0] == (
        "2024-01-02",
        "45.20",
        "REWE Markt GmbH",
        "camt053",
        "2024010200001234",
    )
    account.refresh_from_db()
    assert account.reported_balance == Decimal("3137.48")
    again = uploaded(
        alice.client,
        fixture("camt053_v02_batch.xml"),
        "c.xml",
        "Camt053Import",
        account_id=str(account.pk),
    )
    assert again["stats"]["duplicates_count"] == 6
    assert (
        readback(publish(alice.client, again["id"], django_capture_on_commit_callbacks))[
            "statements"
        ][0]["status"]
        == "matched"
    )  # duplicates are entries of the statement too
    revert(alice.client, again["id"], django_capture_on_commit_callbacks)
    revert(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert account_state(account) == before


def test_closing_balance_mismatch_is_reported(alice, django_capture_on_commit_callbacks):
    account = alice.account(currency="EUR")
    content = fixture("camt053_v02_batch.xml").replace(
        b'<Amt Ccy="EUR">3137.48</Amt>', b'<Amt Ccy="EUR">3137.50</Amt>'
    )
    data = uploaded(alice.client, content, "c.xml", "Camt053Import", account_id=str(account.pk))
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert done["status"] == "complete"
    check = readback(done)
    assert check["status"] == "mismatch"
    assert check["mismatches"] == {
        "statements": {"1": {"account": GIRO_IBAN, "expected": "3137.5", "actual": "3137.48"}}
    }
    assert check["statements"][0]["status"] == "mismatch"
    assert check["checked_counts"]["transactions"] == 6  # the rows themselves were all written


def test_camt053_v08_two_accounts_pending_entry_and_reported_balances(
    alice, django_capture_on_commit_callbacks
):
    courant = alice.account(name="Compte courant", currency="EUR")
    epargne = alice.account(name="Livret", currency="EUR")
    states = (account_state(courant), account_state(epargne))
    data = uploaded(alice.client, fixture("camt053_v08_two_accounts.xml"), "m.xml", "Camt053Import")
    map_accounts(
        alice.client,
        data["id"],
        {"FR7630006000011234567890189": courant, "FR7630006000019876543210112": epargne},
    )
    listed = rows(alice.client, data["id"])
    assert [(r["date"], r["amount"], r["name"], r["skipped"]) for r in listed] == [
        ("2024-03-01", "-1850.00", "Société Générale Employeur", False),
        ("2024-03-04", "74.25", "EDF Électricité", False),
        ("2024-03-06", "-74.25", "EDF Électricité", False),
        ("2024-03-28", "693.00", "Agence Immobilière Dupont", False),
        ("2024-03-31", "15.00", "Café de Flore", True),
        ("2024-03-15", "-500.00", "Jean Martin", False),
    ]
    assert listed[4]["errors"] == ["line 189: entry status PDNG is not booked: left out"]
    # NtryRef when there is no AcctSvcrRef.
    assert [r["fingerprint"] for r in listed[:2]] == ["ASR-0301-001", "N002"]
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    check = readback(done)
    assert check["status"] == "matched", (check["mismatches"], check["statements"])
    assert [(s["account_id"], s["computed_closing"], s["status"]) for s in check["statements"]] == [
        (str(courant.pk), "1969.4", "matched"),
        (str(epargne.pk), "350", "matched"),
    ]
    assert not Transaction.objects.filter(name="Café de Flore").exists()
    courant.refresh_from_db()
    epargne.refresh_from_db()
    assert (courant.reported_balance, epargne.reported_balance) == (
        Decimal("1969.40"),
        Decimal("350.00"),
    )
    assert timezone.localdate(courant.reported_balance_at) == dt.date(2024, 3, 31)
    revert(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert (account_state(courant), account_state(epargne)) == states


def test_mt940_two_accounts_details_reversal_and_balances(
    alice, django_capture_on_commit_callbacks
):
    giro = alice.account(name="Giro", currency="EUR")
    tagesgeld = alice.account(name="Tagesgeld", currency="EUR")
    states = (account_state(giro), account_state(tagesgeld))
    content = fixture("mt940_two_accounts.sta")
    resp = upload(alice.client, content, "umsaetze.sta", "Mt940Import")
    assert resp.status_code == 201, resp.content
    data = resp.json()["data"]
    map_accounts(
        alice.client,
        data["id"],
        {"37040044/0532013000": giro, "37040044/0532013999": tagesgeld},
    )
    listed = rows(alice.client, data["id"])
    assert [(r["row_number"], r["date"], r["amount"], r["name"], r["notes"]) for r in listed] == [
        (6, "2024-01-02", "45.20", "REWE Markt GmbH", "Kartenzahlung 02.01.18:23 Koeln"),
        (9, "2024-01-03", "-2500.00", "Muster und Söhne AG", "Gehalt Januar 2024"),
        (11, "2024-01-15", "187.62", "Sammellastschrift", "Strom/Telefon/Sport Januar"),
        # RD: the reversal of a debit is money back.
        (13, "2024-01-16", "-45.20", "REWE Markt GmbH", "STORNO KARTENZAHLUNG"),
        (15, "2024-01-31", "650.00", "Hausverwaltung Schmidt", "Miete Januar"),
        (25, "2023-12-29", "9.99", "Spotify AB", "Premium december"),
        (27, "2024-01-02", "-300.00", "Umbuchung vom Girokonto", "Dankeschoen"),
    ]
    assert listed[0]["fingerprint"] == "0000000001:2024-01-02:45.20"
    assert listed[6]["fingerprint"].startswith("csv:")  # no bank reference
    assert listed[0]["raw"][":61:"] == "2401020102DR45,20NMSCNONREF//0000000001"
    done = publish(alice.client, data["id"], django_capture_on_commit_callbacks)
    check = readback(done)
    assert check["status"] == "matched", check
    assert [
        (s["opening_balance"], s["closing_balance"], s["status"]) for s in check["statements"]
    ] == [
        ("1520.3", "3182.68", "matched"),
        ("-120", "170.01", "matched"),
    ]
    assert {t[3] for t in published_rows(giro)} == {"mt940"}
    giro.refresh_from_db()
    tagesgeld.refresh_from_db()
    assert (giro.reported_balance, tagesgeld.reported_balance) == (
        Decimal("3182.68"),
        Decimal("170.01"),
    )
    again = uploaded(alice.client, content, "umsaetze.sta", "Mt940Import")
    assert again["status_detail"]["publishable"] is True  # the accounts are remembered
    assert again["stats"]["duplicates_count"] == 7
    revert(alice.client, data["id"], django_capture_on_commit_callbacks)
    assert (account_state(giro), account_state(tagesgeld)) == states
