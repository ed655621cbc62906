"""POST /api/v1/transactions/bulk: many creates per request, each under the single-create rules."""

from __future__ import annotations

import datetime as dt
import uuid
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from unittest import mock

import pytest
import requests
from django.db import connection
from django.test.utils import CaptureQueriesContext

from finance.ledger import batch as ledger_batch_module
from finance.models import ApiKey, Transaction
from finance.serializers.transactions import BULK_MAX_ITEMS
from finance.services.api_keys import api_key_create
from tests.conftest import assert_error
from tests.factories import (
    AccountFactory,
    CategoryFactory,
    MerchantFactory,
    TagFactory,
    TransactionFactory,
    UserFactory,
)

URL = "/api/v1/transactions/bulk"


def item(account, **fields):
    return {
        "account_id": str(account.id),
        "date": "2024-05-02",
        "amount": "25",
        "name": "Coffee beans",
        **fields,
    }


def post(household, items):
    return household.client.post(URL, {"transactions": items}, format="json")


@pytest.mark.django_db
class TestBulkCreate:
    def test_mixed_items_answer_in_order(self, alice):
        account = alice.account()
        category = CategoryFactory(family=alice.family)
        tag = TagFactory(family=alice.family)
        without_name = item(account, description="From description", nature="outflow")
        del without_name["name"]
        r = post(
            alice,
            [
                item(account, nature="income", category_id=str(category.id), tag_ids=[str(tag.id)]),
                item(account, amount="abc"),
                {"date": "2024-05-02"},
                without_name,
                "not an object",
            ],
        )
        assert r.status_code == 200
        body = r.json()
        assert [x["index"] for x in body["results"]] == [0, 1, 2, 3, 4]
        assert [x["status"] for x in body["results"]] == [201, 422, 422, 201, 422]
        assert body["summary"] == {"created": 2, "existing": 0, "failed": 3}
        first = body["results"][0]
        assert first["errors"] is None
        assert first["transaction"]["amount"] == "-25.00"
        assert first["transaction"]["classification"] == "income"
        assert first["transaction"]["currency"] == "USD"
        assert first["transaction"]["category"]["id"] == str(category.id)
        assert [t["id"] for t in first["transaction"]["tags"]] == [str(tag.id)]
        assert body["results"][1]["transaction"] is None
        assert body["results"][1]["errors"] == ["amount: must be a number"]
        missing = body["results"][2]["errors"]
        for field in ("account_id", "amount"):
            assert any(e.startswith(f"{field}:") for e in missing), missing
        assert body["results"][3]["transaction"]["name"] == "From description"
        assert body["results"][3]["transaction"]["amount"] == "25.00"
        assert body["results"][4]["errors"]
        assert Transaction.objects.filter(family=alice.family).count() == 2

    def test_same_errors_as_single_create(self, alice):
        """The item rules are the single create's: same messages without the `transaction.`."""
        account = alice.account()
        bad = item(account, source="bank", currency="ZZZ")
        single = alice.client.post("/api/v1/transactions", {"transaction": bad}, format="json")
        single_errors = assert_error(single, 422, "validation_failed")["errors"]
        bulk_errors = post(alice, [bad]).json()["results"][0]["errors"]
        assert [f"transaction.{e}" for e in bulk_errors] == single_errors

    def test_duplicates_within_request_and_against_stored_rows(self, alice):
        account = alice.account()
        stored = TransactionFactory(account=account, external_id="old", source="api")
        r = post(
            alice,
            [
                item(account, external_id="new"),
                item(account, external_id="new", amount="99", name="second"),
                item(account, external_id="old"),
                item(account, external_id="new", source="bank"),
                item(account),
                item(account),
            ],
        )
        results = r.json()["results"]
        assert [x["status"] for x in results] == [201, 200, 200, 201, 201, 201]
        assert results[1]["transaction"] == results[0]["transaction"]
        assert results[1]["transaction"]["amount"] == "25.00"
        assert results[2]["transaction"]["id"] == str(stored.id)
        assert results[3]["transaction"]["source"] == "bank"
        assert r.json()["summary"] == {"created": 4, "existing": 2, "failed": 0}
        assert Transaction.objects.filter(account=account).count() == 5
        again = post(alice, [item(account, external_id="new")]).json()
        assert again["results"][0]["status"] == 200
        assert again["results"][0]["transaction"]["id"] == results[0]["transaction"]["id"]

    def test_foreign_ids_fail_only_their_item(self, alice, charlie):
        mine, theirs = alice.account(), charlie.account()
        r = post(
            alice,
            [
                item(theirs),
                item(mine, merchant_id=str(MerchantFactory(family=charlie.family).id)),
                item(mine, tag_ids=[str(TagFactory(family=charlie.family).id)]),
                item(mine),
            ],
        )
        results = r.json()["results"]
        assert results[0]["errors"] == ["account_id: does not exist in this household"]
        assert results[1]["errors"] == ["merchant_id: does not exist in this household"]
        assert results[2]["errors"][0].startswith("tag_ids: ")
        assert [x["status"] for x in results] == [422, 422, 422, 201]
        assert Transaction.objects.filter(family=charlie.family).count() == 0
        assert Transaction.objects.filter(family=alice.family).count() == 1

    @pytest.mark.parametrize(
        ("payload", "message"),
        [
            ({"transactions": []}, "transactions: This list may not be empty."),
            ({}, "transactions: This field is required."),
            ({"transactions": {"a": 1}}, "transactions: Expected a list"),
            (
                {"transactions": [{}] * (BULK_MAX_ITEMS + 1)},
                f"transactions: Ensure this field has no more than {BULK_MAX_ITEMS} elements.",
            ),
        ],
    )
    def test_envelope_problems_are_422(self, alice, payload, message):
        r = alice.client.post(URL, payload, format="json")
        errors = assert_error(r, 422, "validation_failed")["errors"]
        assert errors[0].startswith(message), errors
        assert not Transaction.objects.exists()

    def test_read_key_and_anonymous_refused(self, alice, anon):
        payload = {"transactions": [item(alice.account())]}
        assert_error(alice.read_client.post(URL, payload, format="json"), 403, "insufficient_scope")
        assert_error(anon.post(URL, payload, format="json"), 401, "unauthorized")
        assert not Transaction.objects.exists()

    def test_balances_right_after_and_derived_once(self, alice):
        checking, savings = alice.account(), alice.account()
        items = [
            item(checking, amount="10", date="2024-05-03"),
            item(checking, amount="-100", date="2024-05-01"),
            item(savings, amount="-7.5", date="2024-06-01"),
            item(savings, amount="x"),
        ]
        with mock.patch.object(
            ledger_batch_module, "derive", wraps=ledger_batch_module.derive
        ) as spy:
            assert post(alice, items).status_code == 200
        spy.assert_called_once()
        assert spy.call_args.kwargs["account_dates"] == {
            checking.id: dt.date(2024, 5, 1),
            savings.id: dt.date(2024, 6, 1),
        }
        checking.refresh_from_db()
        savings.refresh_from_db()
        assert checking.balance == Decimal("90")
        assert savings.balance == Decimal("7.5")

    def test_each_result_is_what_a_read_answers(self, alice):
        """Created rows are answered from what was written (no re-read): every result must
        equal GET /transactions/{id}, tags in list order, a pair matched in the same request
        showing its transfer, an existing row as stored."""
        checking, savings = alice.account(), alice.account(name="Savings")
        category = CategoryFactory(family=alice.family)
        merchant = MerchantFactory(family=alice.family)
        tags = [TagFactory(family=alice.family, name=n) for n in ("zeta", "alpha", "mid")]
        stored = TransactionFactory(account=checking, external_id="old", source="api")
        r = post(
            alice,
            [
                item(checking, amount="1e2", nature="outflow", date="2024-05-01"),
                item(savings, amount="100.0000", nature="inflow", date="2024-05-03"),
                item(
                    checking,
                    amount="12.3456",
                    currency="eur",
                    notes="",
                    excluded=True,
                    category_id=str(category.id),
                    merchant_id=str(merchant.id),
                    tag_ids=[str(t.id) for t in tags],
                    external_id="ext-1",
                    source="bank",
                ),
                item(checking, amount="-0", name="Zero"),
                item(checking, external_id="old"),
            ],
        )
        results = r.json()["results"]
        assert [x["status"] for x in results] == [201, 201, 201, 201, 200]
        for result in results:
            txn = result["transaction"]
            read = alice.client.get(f"/api/v1/transactions/{txn['id']}")
            assert read.status_code == 200
            assert txn == read.json(), txn["name"]
        assert (
            results[0]["transaction"]["transfer"]["id"]
            == results[1]["transaction"]["transfer"]["id"]
        )
        assert [t["name"] for t in results[2]["transaction"]["tags"]] == ["alpha", "mid", "zeta"]
        assert results[4]["transaction"]["id"] == str(stored.id)

    def test_nothing_created_calls_no_ledger_work(self, alice):
        account = alice.account()
        with mock.patch.object(ledger_batch_module, "derive") as spy:
            post(alice, [item(account, amount="bad")])
        spy.assert_not_called()
        assert account.balances.count() == 0

    def test_1000_items_cost_a_constant_number_of_queries(
        self, alice, django_assert_max_num_queries
    ):
        accounts = [alice.account() for _ in range(3)]
        tags = [TagFactory(family=alice.family) for _ in range(3)]
        categories = [CategoryFactory(family=alice.family) for _ in range(3)]
        items = [
            item(
                accounts[i % 3],
                amount=str(i + 1),
                date=f"2024-05-{1 + i % 28:02d}",
                external_id=f"ext-{i % 900}",
                category_id=str(categories[i % 3].id),
                tag_ids=[str(t.id) for t in tags[: i % 4]],
            )
            for i in range(BULK_MAX_ITEMS)
        ]
        # GIVEN the cost of 10 such items (batch resolution, one ledger run for 3 accounts)
        with CaptureQueriesContext(connection) as small:
            post(alice, [{**x, "external_id": f"small-{n}"} for n, x in enumerate(items[:10])])
        # THEN 1,000 items cost only the extra insert batches (SQLite binds at most 999
        # parameters per statement, so about 20 INSERTs for 1,000 rows) on top of that.
        with django_assert_max_num_queries(len(small.captured_queries) + 25):
            r = post(alice, items)
        summary = r.json()["summary"]
        assert summary["created"] + summary["existing"] == BULK_MAX_ITEMS
        assert summary["failed"] == 0
        assert Transaction.objects.filter(family=alice.family).count() == summary["created"] + 10
        created_ids = [x["transaction"]["id"] for x in r.json()["results"] if x["status"] == 201]
        assert Transaction.tags.through.objects.filter(transaction_id__in=created_ids).count() == (
            sum(len(x["transaction"]["tags"]) for x in r.json()["results"] if x["status"] == 201)
        )
        # A second identical request writes nothing and answers every item "existing".
        with django_assert_max_num_queries(12):
            again = post(alice, items).json()["summary"]
        assert again == {"created": 0, "existing": BULK_MAX_ITEMS, "failed": 0}


@pytest.mark.django_db(transaction=True)
def test_racing_bulk_requests_store_each_key_once(postgres_only, live_server):
    user = UserFactory()
    account = AccountFactory(family=user.family)
    _, key = api_key_create(user=user, name="k", scope=ApiKey.SCOPE_READ_WRITE)
    items = [item(account, external_id=f"race-{i}") for i in range(50)]

    def send(_: int) -> dict:
        r = requests.post(
            f"{live_server.url}{URL}",
            json={"transactions": items},
            headers={"X-Api-Key": key},
            timeout=60,
        )
        assert r.status_code == 200
        return r.json()["summary"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        summaries = list(pool.map(send, range(8)))
    assert sum(s["created"] for s in summaries) == 50
    assert sum(s["existing"] for s in summaries) == 50 * 7
    assert Transaction.objects.filter(account=account).count() == 50


@pytest.mark.django_db
def test_keys_stored_after_the_check_are_answered_existing(alice):
    """GIVEN rows whose keys the write's first look did not see (a racing writer stored them
    between that look and the insert), WHEN a bulk request holds them among new rows, THEN the
    unique constraint decides: the new rows are created, the others answered with the rows
    stored, and nothing is written twice (PostgreSQL: the straight COPY gives way to the staged
    `ON CONFLICT` insert)."""
    from finance.ledger import rows as ledger_rows

    account = alice.account()
    stored = post(alice, [item(account, external_id=f"k-{i}") for i in range(40)]).json()
    ids = {r["transaction"]["external_id"]: r["transaction"]["id"] for r in stored["results"]}
    real = ledger_rows.stored_by_key
    _first = [True]

    def look(keys):
        if _first[0]:
            _first[0] = False
            return {}
        return real(keys)

    items = [item(account, external_id=f"k-{i}") for i in range(50)]
    with mock.patch.object(ledger_rows, "stored_by_key", look):
        r = post(alice, items)
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["summary"] == {"created": 10, "existing": 40, "failed": 0}
    for result in body["results"][:40]:
        assert result["status"] == 200
        assert result["transaction"]["id"] == ids[result["transaction"]["external_id"]]
    assert Transaction.objects.filter(account=account).count() == 50
    account.refresh_from_db()
    assert account.balance == -50 * 25


def test_new_rows_get_time_ordered_keys(alice):
    """Every road into the ledger gives a new row a version-7 key (core/keys.py): a batch's
    rows fill the key index's last pages instead of a random page each."""
    account = alice.account()
    item = {"account_id": str(account.id), "date": "2024-05-02", "amount": "4.50", "name": "A"}
    one = alice.client.post("/api/v1/transactions", {"transaction": item}, format="json")
    assert one.status_code == 201, one.content
    items = [{**item, "name": f"B{i}"} for i in range(40)]
    many = alice.client.post("/api/v1/transactions/bulk", {"transactions": items}, format="json")
    assert many.status_code == 200, many.content
    ids = [uuid.UUID(one.json()["id"])]
    ids += [uuid.UUID(r["transaction"]["id"]) for r in many.json()["results"]]
    assert {key.version for key in ids} == {7} and len(set(ids)) == 41
    assert ids[0] < min(ids[1:])  # the single create came first: its key sorts first


def test_a_stored_key_answers_only_its_own_account_source_and_id(alice):
    """Keys are looked up whole (PostgreSQL: one probe of the unique index per key): parts of
    stored keys that combine into a new one do not make it existing."""
    checking, savings = alice.account(), alice.account(name="Savings")
    a = TransactionFactory(account=checking, external_id="x1", source="bank")
    b = TransactionFactory(account=savings, external_id="x2", source="api")
    with CaptureQueriesContext(connection) as queries:
        r = post(
            alice,
            [
                item(checking, external_id="x2", source="bank"),
                item(savings, external_id="x1", source="api"),
                item(checking, external_id="x1", source="api"),
                item(checking, external_id="x1", source="bank"),
                item(savings, external_id="x2"),
            ],
        )
    results = r.json()["results"]
    assert [x["status"] for x in results] == [201, 201, 201, 200, 200]
    if connection.vendor == "postgresql":  # whole keys, one probe each (rows.stored_by_key)
        lookups = [q["sql"] for q in queries.captured_queries if "AS k (a, s, e)" in q["sql"]]
        assert len(lookups) == 1
    assert [results[3]["transaction"]["id"], results[4]["transaction"]["id"]] == [
        str(a.pk),
        str(b.pk),
    ]
