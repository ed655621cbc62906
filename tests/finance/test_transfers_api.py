"""Transfers: suggestion, confirm, reject, manual link, rejected transfers (issue 3)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from finance.ledger.transfer_matching import transfers_match
from finance.models import Account, RejectedTransfer, Transaction, Transfer
from tests.conftest import assert_error
from tests.factories import TransactionFactory


def post_txn(household, account, date: str, amount: str, name: str = "Move") -> dict:
    r = household.client.post(
        "/api/v1/transactions",
        {
            "transaction": {
                "account_id": str(account["id"] if isinstance(account, dict) else account.id),
                "date": date,
                "amount": amount,
                "name": name,
            }
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    return r.json()


@pytest.mark.django_db
def test_how_it_will_be_checked(alice):
    # GIVEN a fresh household with two accounts created over HTTP
    accounts = []
    for name in ("Checking", "Savings"):
        r = alice.client.post("/api/v1/accounts", {"account": {"name": name}}, format="json")
        assert r.status_code == 201, r.content
        accounts.append(r.json())
    checking, savings = accounts
    # WHEN 500.00 leaves checking and arrives in savings two days later
    outflow = post_txn(alice, checking, "2024-03-01", "500.00")
    inflow = post_txn(alice, savings, "2024-03-03", "-500.00")
    # THEN a pending transfer is suggested
    r = alice.client.get("/api/v1/transfers")
    assert r.status_code == 200
    transfers = r.json()["transfers"]
    assert len(transfers) == 1
    transfer = transfers[0]
    assert transfer["status"] == "pending"
    assert transfer["amount"] == "500.00" and transfer["currency"] == "USD"
    assert transfer["date"] == "2024-03-01"
    assert transfer["outflow_transaction"]["id"] == outflow["id"]
    assert transfer["inflow_transaction"]["id"] == inflow["id"]
    assert transfer["inflow_transaction"]["kind"] == "funds_movement"
    assert transfer["outflow_transaction"]["kind"] == "funds_movement"
    txn = alice.client.get(f"/api/v1/transactions/{outflow['id']}").json()
    assert txn["transfer"]["id"] == transfer["id"]
    assert txn["transfer"]["other_account"]["id"] == savings["id"]
    # WHEN it is rejected
    r = alice.client.post(f"/api/v1/transfers/{transfer['id']}/reject")
    assert r.status_code == 200, r.content
    rejected_id = r.json()["id"]
    # THEN the rejected transfer reads back with the document's shape
    r = alice.client.get(f"/api/v1/rejected_transfers/{rejected_id}")
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {
        "id",
        "inflow_transaction",
        "outflow_transaction",
        "created_at",
        "updated_at",
    }
    assert body["outflow_transaction"] == {
        "id": outflow["id"],
        "entry_id": outflow["id"],
        "date": "2024-03-01",
        "amount": "500.00",
        "amount_cents": 50000,
        "currency": "USD",
        "name": "Move",
        "kind": "standard",
        "account": {"id": checking["id"], "name": "Checking", "account_type": "depository"},
    }
    assert body["inflow_transaction"]["amount"] == "-500.00"
    assert body["inflow_transaction"]["amount_cents"] == -50000
    assert body["inflow_transaction"]["kind"] == "standard"
    assert alice.client.get(f"/api/v1/transfers/{transfer['id']}").status_code == 404
    assert alice.client.get(f"/api/v1/transactions/{inflow['id']}").json()["transfer"] is None
    # AND the pair is never suggested again, even after more ledger writes on both accounts
    alice.client.patch(
        f"/api/v1/transactions/{inflow['id']}", {"transaction": {"name": "x"}}, format="json"
    )
    post_txn(alice, checking, "2024-03-02", "1.00", name="Other")
    assert (
        transfers_match(
            family=alice.family, account_ids=[Account.objects.get(pk=checking["id"]).pk]
        )
        == 0
    )
    assert alice.client.get("/api/v1/transfers").json()["transfers"] == []
    r = alice.client.get("/api/v1/rejected_transfers", {"account_id": savings["id"]})
    assert [row["id"] for row in r.json()["rejected_transfers"]] == [rejected_id]


def legs(household, out_kwargs=None, in_kwargs=None, amount=Decimal("100")):
    out_account = household.account(**(out_kwargs or {}))
    in_account = household.account(**(in_kwargs or {}))
    outflow = TransactionFactory(account=out_account, amount=amount, date=dt.date(2024, 1, 10))
    inflow = TransactionFactory(account=in_account, amount=-amount, date=dt.date(2024, 1, 11))
    return outflow, inflow


@pytest.mark.django_db
class TestMatching:
    @pytest.mark.parametrize(
        ("account_type", "kind"),
        [
            ("loan", "loan_payment"),
            ("credit_card", "cc_payment"),
            ("investment", "investment_contribution"),
            ("crypto", "investment_contribution"),
            ("depository", "funds_movement"),
        ],
    )
    def test_outflow_kind_follows_destination(self, alice, account_type, kind):
        outflow, inflow = legs(alice, in_kwargs={"account_type": account_type})
        assert transfers_match(family=alice.family, account_ids=[outflow.account_id]) == 1
        outflow.refresh_from_db()
        inflow.refresh_from_db()
        assert outflow.kind == kind and inflow.kind == "funds_movement"

    def test_rules(self, alice):
        a, b = alice.account(), alice.account()
        base = dt.date(2024, 1, 10)
        out = TransactionFactory(account=a, amount=Decimal("50"), date=base)
        # too far apart, other currency, same account: none match
        TransactionFactory(account=b, amount=Decimal("-50"), date=base + dt.timedelta(days=5))
        TransactionFactory(account=b, amount=Decimal("-50"), currency="EUR", date=base)
        TransactionFactory(account=a, amount=Decimal("-50"), date=base)
        assert transfers_match(family=alice.family, account_ids=[a.pk, b.pk]) == 0
        # exactly four days apart matches
        four = TransactionFactory(
            account=b, amount=Decimal("-50"), date=base - dt.timedelta(days=4)
        )
        assert transfers_match(family=alice.family, account_ids=[b.pk]) == 1
        assert Transfer.objects.get().outflow_transaction == out
        assert Transfer.objects.get().inflow_transaction == four

    def test_closest_date_wins_and_leg_never_paired_twice(self, alice):
        a, b = alice.account(), alice.account()
        out = TransactionFactory(account=a, amount=Decimal("20"), date=dt.date(2024, 1, 10))
        TransactionFactory(account=b, amount=Decimal("-20"), date=dt.date(2024, 1, 13))
        near = TransactionFactory(account=b, amount=Decimal("-20"), date=dt.date(2024, 1, 11))
        assert transfers_match(family=alice.family, account_ids=[a.pk, b.pk]) == 1
        transfer = Transfer.objects.get()
        assert (transfer.outflow_transaction, transfer.inflow_transaction) == (out, near)
        assert transfers_match(family=alice.family, account_ids=[a.pk, b.pk]) == 0

    def test_other_household_never_paired(self, alice, charlie):
        out = TransactionFactory(account=alice.account(), amount=Decimal("9"))
        TransactionFactory(account=charlie.account(), amount=Decimal("-9"))
        assert transfers_match(family=alice.family, account_ids=[out.account_id]) == 0


@pytest.mark.django_db
class TestEndpoints:
    def test_manual_link_is_confirmed(self, alice):
        outflow, inflow = legs(alice, in_kwargs={"account_type": "credit_card"})
        r = alice.client.post(
            "/api/v1/transfers",
            {
                "transfer": {
                    "inflow_transaction_id": str(inflow.id),
                    "outflow_transaction_id": str(outflow.id),
                }
            },
            format="json",
        )
        assert r.status_code == 201, r.content
        assert r.json()["status"] == "confirmed"
        assert r.json()["outflow_transaction"]["kind"] == "cc_payment"
        # already paired: 409
        r = alice.client.post(
            "/api/v1/transfers",
            {
                "transfer": {
                    "inflow_transaction_id": str(inflow.id),
                    "outflow_transaction_id": str(outflow.id),
                }
            },
            format="json",
        )
        assert_error(r, 409, "conflict")

    def test_manual_link_validation(self, alice, charlie):
        outflow, inflow = legs(alice)
        foreign = TransactionFactory(account=charlie.account(), amount=Decimal("-100"))
        cases = [
            (
                {
                    "inflow_transaction_id": str(outflow.id),
                    "outflow_transaction_id": str(inflow.id),
                },
                ["inflow_transaction_id", "outflow_transaction_id"],
            ),
            (
                {
                    "inflow_transaction_id": str(foreign.id),
                    "outflow_transaction_id": str(outflow.id),
                },
                ["inflow_transaction_id"],
            ),
        ]
        for fields, named in cases:
            r = alice.client.post("/api/v1/transfers", {"transfer": fields}, format="json")
            body = assert_error(r, 422, "validation_failed")
            assert [e.split(":")[0] for e in body["errors"]] == named
        r = alice.client.post("/api/v1/transfers", {}, format="json")
        assert_error(r, 422, "validation_failed")

    def test_confirm(self, alice):
        outflow, _ = legs(alice)
        transfers_match(family=alice.family, account_ids=[outflow.account_id])
        transfer = Transfer.objects.get()
        r = alice.client.post(f"/api/v1/transfers/{transfer.id}/confirm")
        assert r.status_code == 200 and r.json()["status"] == "confirmed"
        assert (
            alice.client.get("/api/v1/transfers", {"status": "pending"}).json()["transfers"] == []
        )

    def test_filters_and_pagination(self, alice):
        for day in range(1, 4):
            a, b = alice.account(), alice.account()
            TransactionFactory(account=a, amount=Decimal("5"), date=dt.date(2024, 2, day))
            TransactionFactory(account=b, amount=Decimal("-5"), date=dt.date(2024, 2, day))
            transfers_match(family=alice.family, account_ids=[a.pk])
        r = alice.client.get("/api/v1/transfers", {"per_page": 2})
        assert r.json()["pagination"] == {
            "page": 1,
            "per_page": 2,
            "total_count": 3,
            "total_pages": 2,
        }
        dates = [t["date"] for t in r.json()["transfers"]]
        assert dates == ["2024-02-03", "2024-02-02"]
        r = alice.client.get(
            "/api/v1/transfers", {"start_date": "2024-02-02", "end_date": "2024-02-02"}
        )
        assert [t["date"] for t in r.json()["transfers"]] == ["2024-02-02"]
        account_id = r.json()["transfers"][0]["inflow_transaction"]["account"]["id"]
        r = alice.client.get("/api/v1/transfers", {"account_id": account_id})
        assert r.json()["pagination"]["total_count"] == 1
        assert_error(
            alice.client.get("/api/v1/transfers", {"status": "x"}), 422, "validation_failed"
        )
        assert_error(
            alice.client.get("/api/v1/transfers", {"account_id": "nope"}), 422, "validation_failed"
        )

    def test_foreign_and_read_key(self, alice, charlie):
        outflow, _ = legs(charlie)
        transfers_match(family=charlie.family, account_ids=[outflow.account_id])
        transfer = Transfer.objects.get()
        assert_error(alice.client.get(f"/api/v1/transfers/{transfer.id}"), 404, "not_found")
        assert_error(alice.client.post(f"/api/v1/transfers/{transfer.id}/reject"), 404, "not_found")
        assert alice.client.get("/api/v1/transfers").json()["transfers"] == []
        assert_error(
            charlie.read_client.post(f"/api/v1/transfers/{transfer.id}/confirm"),
            403,
            "insufficient_scope",
        )
        rejected = charlie.client.post(f"/api/v1/transfers/{transfer.id}/reject").json()
        assert_error(
            alice.client.get(f"/api/v1/rejected_transfers/{rejected['id']}"), 404, "not_found"
        )
        assert alice.client.get("/api/v1/rejected_transfers").json()["rejected_transfers"] == []

    def test_rejected_with_foreign_leg_is_404(self, alice, charlie):
        mine = TransactionFactory(account=alice.account(), amount=Decimal("3"))
        theirs = TransactionFactory(account=charlie.account(), amount=Decimal("-3"))
        rejected = RejectedTransfer.objects.create(
            family=alice.family, inflow_transaction=theirs, outflow_transaction=mine
        )
        assert_error(
            alice.client.get(f"/api/v1/rejected_transfers/{rejected.id}"), 404, "not_found"
        )

    def test_deleting_a_leg_removes_the_transfer(self, alice):
        outflow, inflow = legs(alice)
        transfers_match(family=alice.family, account_ids=[outflow.account_id])
        r = alice.client.delete(f"/api/v1/transactions/{outflow.id}")
        assert r.status_code == 200
        assert Transfer.objects.count() == 0
        assert Transaction.objects.filter(pk=inflow.pk).exists()


@pytest.mark.django_db
def test_editing_a_suggested_leg_withdraws_the_suggestion(alice):
    outflow, inflow = legs(alice)
    transfers_match(family=alice.family, account_ids=[outflow.account_id])
    r = alice.client.patch(
        f"/api/v1/transactions/{outflow.id}", {"transaction": {"amount": "99"}}, format="json"
    )
    assert r.status_code == 200
    assert r.json()["transfer"] is None and r.json()["kind"] == "standard"
    assert Transfer.objects.count() == 0
    inflow.refresh_from_db()
    assert inflow.kind == "standard"
    # a confirmed transfer is kept whatever the edit
    r = alice.client.post(
        "/api/v1/transfers",
        {
            "transfer": {
                "inflow_transaction_id": str(inflow.id),
                "outflow_transaction_id": str(outflow.id),
            }
        },
        format="json",
    )
    assert r.status_code == 201
    alice.client.patch(
        f"/api/v1/transactions/{outflow.id}", {"transaction": {"amount": "98"}}, format="json"
    )
    assert Transfer.objects.get().status == "confirmed"
