"""The household admin: each household's users see and edit only their own rows (issue 3)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.test import Client

from finance.ledger.transfer_matching import transfers_match
from finance.models import RejectedTransfer, Transaction, Transfer
from finance.services.households import household_permissions_grant
from tests.factories import (
    CategoryFactory,
    MerchantFactory,
    TagFactory,
    TransactionFactory,
    UserFactory,
)


def seed(household, who: str) -> dict:
    """One of each record, every name marked with the household's persona."""
    checking = household.account(name=f"{who}-checking")
    savings = household.account(name=f"{who}-savings")
    category = CategoryFactory(family=household.family, name=f"{who}-category")
    merchant = MerchantFactory(family=household.family, name=f"{who}-merchant")
    tag = TagFactory(family=household.family, name=f"{who}-tag")
    txn = TransactionFactory(
        account=checking,
        name=f"{who}-coffee",
        category=category,
        merchant=merchant,
        amount=Decimal("4.50"),
    )
    out = TransactionFactory(
        account=checking, name=f"{who}-move-out", amount=Decimal("300"), date=dt.date(2024, 6, 1)
    )
    TransactionFactory(
        account=savings, name=f"{who}-move-in", amount=Decimal("-300"), date=dt.date(2024, 6, 2)
    )
    transfers_match(family=household.family, account_ids=[checking.pk])
    transfer = Transfer.objects.get(outflow_transaction=out)
    other_out = TransactionFactory(account=checking, name=f"{who}-rej-out", amount=Decimal("7"))
    other_in = TransactionFactory(account=savings, name=f"{who}-rej-in", amount=Decimal("-7"))
    rejected = RejectedTransfer.objects.create(
        family=household.family, inflow_transaction=other_in, outflow_transaction=other_out
    )
    return {
        "account": checking,
        "category": category,
        "merchant": merchant,
        "tag": tag,
        "transaction": txn,
        "transfer": transfer,
        "rejectedtransfer": rejected,
    }


def login(household) -> Client:
    household_permissions_grant(user=household.user)
    client = Client()
    client.force_login(household.user)
    return client


@pytest.fixture
def two(alice, charlie):
    return (
        (login(alice), seed(alice, "alice")),
        (login(charlie), seed(charlie, "charlie")),
    )


@pytest.mark.django_db
class TestHouseholdIsolation:
    @pytest.mark.parametrize(
        "model",
        ["account", "category", "merchant", "tag", "transaction", "transfer", "rejectedtransfer"],
    )
    def test_list_change_delete_pages(self, two, model):
        for (client, mine), (_, theirs) in (two, two[::-1]):
            me = "alice" if "alice" in str(mine["account"]) else "charlie"
            stranger = "charlie" if me == "alice" else "alice"
            r = client.get(f"/admin/finance/{model}/")
            assert r.status_code == 200
            page = r.content.decode()
            assert f"{me}-" in page
            assert f"{stranger}-" not in page
            own = mine[model]
            assert client.get(f"/admin/finance/{model}/{own.pk}/change/").status_code == 200
            foreign = theirs[model]
            for suffix in ("change", "delete"):
                r = client.get(f"/admin/finance/{model}/{foreign.pk}/{suffix}/")
                # the admin treats another household's row as missing: back to the index
                assert r.status_code == 302, (model, suffix)
                assert r["Location"] == "/admin/"
            r = client.post(f"/admin/finance/{model}/{foreign.pk}/delete/", {"post": "yes"})
            assert r.status_code == 302
            assert type(foreign).objects.filter(pk=foreign.pk).exists()

    @pytest.mark.parametrize(
        ("field", "marker"),
        [
            ("account", "checking"),
            ("category", "category"),
            ("merchant", "merchant"),
            ("tags", "tag"),
        ],
    )
    def test_autocomplete(self, two, field, marker):
        for client, mine in (two[0], two[1]):
            me = "alice" if "alice" in str(mine["account"]) else "charlie"
            r = client.get(
                "/admin/autocomplete/",
                {"app_label": "finance", "model_name": "transaction", "field_name": field},
            )
            assert r.status_code == 200, r.content[:300]
            texts = [row["text"] for row in r.json()["results"]]
            assert texts and all(text.startswith(f"{me}-") for text in texts), texts
            assert any(marker in text for text in texts)

    def test_filter_choices(self, two):
        for client, mine in (two[0], two[1]):
            me = "alice" if "alice" in str(mine["account"]) else "charlie"
            stranger = "charlie" if me == "alice" else "alice"
            page = client.get("/admin/finance/transaction/").content.decode()
            assert f"{me}-checking" in page and f"{me}-category" in page
            assert f"{stranger}-checking" not in page and f"{stranger}-category" not in page
            # filtering by another household's account shows nothing of theirs
            other = two[1][1] if me == "alice" else two[0][1]
            r = client.get(
                "/admin/finance/transaction/", {"account__id__exact": other["account"].pk}
            )
            assert f"{stranger}-" not in r.content.decode()

    def test_superuser_sees_all(self, two):
        admin = UserFactory(is_superuser=True, family=None)
        client = Client()
        client.force_login(admin)
        page = client.get("/admin/finance/transaction/").content.decode()
        assert "alice-coffee" in page and "charlie-coffee" in page


@pytest.mark.django_db
class TestAdminActionsAndWrites:
    def test_confirm_and_reject_actions(self, two):
        (client, mine), _ = two
        transfer = mine["transfer"]
        url = "/admin/finance/transfer/"
        r = client.post(url, {"action": "confirm_transfers", "_selected_action": [transfer.pk]})
        assert r.status_code == 302
        transfer.refresh_from_db()
        assert transfer.status == "confirmed"
        r = client.post(url, {"action": "reject_transfers", "_selected_action": [transfer.pk]})
        assert r.status_code == 302
        assert not Transfer.objects.filter(pk=transfer.pk).exists()
        assert RejectedTransfer.objects.filter(
            outflow_transaction=transfer.outflow_transaction_id
        ).exists()
        assert Transaction.objects.get(pk=transfer.outflow_transaction_id).kind == "standard"

    def test_action_on_foreign_transfer_does_nothing(self, two):
        (client, _), (_, theirs) = two
        transfer = theirs["transfer"]
        client.post(
            "/admin/finance/transfer/",
            {"action": "reject_transfers", "_selected_action": [transfer.pk]},
        )
        assert Transfer.objects.filter(pk=transfer.pk).exists()

    def test_adding_a_transaction_updates_the_balance(self, two):
        (client, mine), (_, theirs) = two
        account = mine["account"]
        data = {
            "account": account.pk,
            "date": "2024-07-01",
            "amount": "1000",  # the form's sign is the list's: money in is positive
            "currency": "USD",
            "name": "alice-salary",
            "kind": "standard",
        }
        r = client.post("/admin/finance/transaction/add/", data)
        assert r.status_code == 302, r.content.decode()[:2000]
        txn = Transaction.objects.get(name="alice-salary")
        assert txn.family == account.family
        account.refresh_from_db()
        assert account.balance == Decimal("1000") - Decimal("4.50") - Decimal("300") - Decimal("7")
        # another household's account is not a valid choice
        r = client.post(
            "/admin/finance/transaction/add/", {**data, "account": theirs["account"].pk}
        )
        assert (
            r.status_code == 200
            and not Transaction.objects.filter(
                account=theirs["account"], name="alice-salary"
            ).exists()
        )
