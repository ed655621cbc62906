"""The provider connection, provider account and sync endpoints."""

from __future__ import annotations

import json

import pytest

from finance.models import Account, Transaction
from providers.base import adapter_class
from providers.models import ProviderAccount, ProviderConnection, Sync
from tests.conftest import assert_error
from tests.providers.conftest import connect, day, run_sync

BASE = "/api/v1"


@pytest.fixture
def upstream(lunchflow):
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "100")
    lunchflow.scenario.add_account("a2", "Savings", "EUR", "200")
    lunchflow.scenario.add_transaction("a1", "t1", day(2), -5, "Bakery")
    return lunchflow.scenario


def create(household, body):
    return household.client.post(f"{BASE}/provider_connections", body, format="json")


def test_create_verifies_the_key_and_answers_the_connection_without_it(alice, upstream):
    response = create(alice, {"provider": "lunchflow", "api_key": "test-key"})
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {
        "id",
        "provider",
        "status",
        "error",
        "last_synced_at",
        "created_at",
        "accounts",
    }
    assert (body["provider"], body["status"], body["error"]) == ("lunchflow", "good", None)
    assert sorted(a["upstream_id"] for a in body["accounts"]) == ["a1", "a2"]
    assert body["accounts"][0]["account_id"] is None and body["accounts"][0]["skipped"] is False
    assert "test-key" not in response.content.decode()
    assert upstream.requests[0]["path"] == "/accounts"


def test_a_refused_key_is_a_422_saying_why_and_nothing_is_created(alice, upstream):
    body = assert_error(
        create(alice, {"provider": "lunchflow", "api_key": "nope"}), 422, "validation_failed"
    )
    assert "refused" in body["message"] and body["errors"][0].startswith("api_key:")
    assert "nope" not in json.dumps(body)
    assert not ProviderConnection.objects.exists()


def test_an_unreachable_provider_is_a_422(alice, settings):
    settings.LUNCHFLOW_BASE_URL = "http://127.0.0.1:9/api/v1"
    body = assert_error(
        create(alice, {"provider": "lunchflow", "api_key": "k"}), 422, "validation_failed"
    )
    assert "Lunch Flow" in body["message"]


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"provider": "lunchflow"}, "api_key"),
        ({"provider": "lunchflow", "api_key": "  "}, "api_key"),
        ({"provider": "plaid", "api_key": "x"}, "provider"),
        ({"api_key": "x"}, "provider"),
    ],
)
def test_invalid_bodies_are_422_naming_the_field(alice, payload, problem):
    body = assert_error(create(alice, payload), 422, "validation_failed")
    assert any(e.startswith(problem) for e in body["errors"]), body


def test_simplefin_goes_to_the_adapter_registry(alice):
    if adapter_class("simplefin") is not None:
        pytest.skip("the SimpleFIN adapter is installed; its own tests cover it")
    body = assert_error(
        create(alice, {"provider": "simplefin", "setup_token": "abc"}), 422, "validation_failed"
    )
    assert "not available" in body["message"]


def test_a_read_key_cannot_connect(alice, upstream):
    response = alice.read_client.post(
        f"{BASE}/provider_connections",
        {"provider": "lunchflow", "api_key": "test-key"},
        format="json",
    )
    assert_error(response, 403, "insufficient_scope")


def test_list_get_and_other_households(alice, charlie, upstream):
    connection = connect(alice)
    listed = alice.client.get(f"{BASE}/provider_connections").json()
    assert [c["id"] for c in listed["provider_connections"]] == [str(connection.pk)]
    assert listed["pagination"]["total_count"] == 1
    got = alice.client.get(f"{BASE}/provider_connections/{connection.pk}").json()
    assert got["id"] == str(connection.pk)
    assert charlie.client.get(f"{BASE}/provider_connections").json()["provider_connections"] == []
    for path in ("", "/accounts"):
        assert_error(
            charlie.client.get(f"{BASE}/provider_connections/{connection.pk}{path}"),
            404,
            "not_found",
        )
    assert_error(
        charlie.client.post(f"{BASE}/provider_connections/{connection.pk}/sync"), 404, "not_found"
    )
    assert_error(
        charlie.client.delete(f"{BASE}/provider_connections/{connection.pk}"), 404, "not_found"
    )
    assert_error(alice.client.get(f"{BASE}/provider_connections/not-a-uuid"), 404, "not_found")


def test_accounts_list_and_link_and_skip(alice, charlie, upstream):
    connection = connect(alice)
    body = alice.client.get(f"{BASE}/provider_connections/{connection.pk}/accounts").json()
    assert [a["name"] for a in body["accounts"]] == ["Checking", "Savings"]
    assert body["pagination"]["total_count"] == 2
    pa = ProviderAccount.objects.get(upstream_id="a1")
    mine = alice.account(name="Main", currency="EUR")
    response = alice.client.patch(
        f"{BASE}/provider_accounts/{pa.pk}", {"account_id": str(mine.pk)}, format="json"
    )
    assert response.status_code == 200 and response.json()["account_id"] == str(mine.pk)
    foreign = charlie.account()
    body = assert_error(
        alice.client.patch(
            f"{BASE}/provider_accounts/{pa.pk}", {"account_id": str(foreign.pk)}, format="json"
        ),
        422,
        "validation_failed",
    )
    assert body["errors"][0].startswith("account_id:")
    other = ProviderAccount.objects.get(upstream_id="a2")
    assert_error(
        alice.client.patch(
            f"{BASE}/provider_accounts/{other.pk}", {"account_id": str(mine.pk)}, format="json"
        ),
        422,
        "validation_failed",
    )
    response = alice.client.patch(
        f"{BASE}/provider_accounts/{other.pk}", {"skipped": True}, format="json"
    )
    assert response.json()["skipped"] is True
    assert_error(
        charlie.client.patch(f"{BASE}/provider_accounts/{pa.pk}", {"skipped": True}, format="json"),
        404,
        "not_found",
    )


def test_sync_is_202_and_runs(alice, upstream, django_capture_on_commit_callbacks):
    connection = connect(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = alice.client.post(f"{BASE}/provider_connections/{connection.pk}/sync")
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "pending" and body["connection_id"] == str(connection.pk)
    done = alice.client.get(f"{BASE}/syncs/{body['id']}").json()
    assert done["status"] == "completed" and done["error"] is None
    assert done["stats"]["transactions_added"] == 1 and done["stats"]["accounts_seen"] == 2
    assert done["started_at"].endswith("Z") and done["finished_at"].endswith("Z")
    assert Transaction.objects.filter(family=alice.family).count() == 1


def test_a_second_sync_request_while_one_is_active_returns_it(alice, upstream):
    connection = connect(alice)
    first = alice.client.post(f"{BASE}/provider_connections/{connection.pk}/sync").json()
    second = alice.client.post(f"{BASE}/provider_connections/{connection.pk}/sync").json()
    assert first["id"] == second["id"]
    assert Sync.objects.count() == 1


def test_account_sync_syncs_its_connection_for_that_account(
    alice, charlie, upstream, django_capture_on_commit_callbacks
):
    connection = connect(alice)
    run_sync(connection)
    account = Account.objects.get(name="Checking")
    with django_capture_on_commit_callbacks(execute=True):
        response = alice.client.post(f"{BASE}/accounts/{account.pk}/sync")
    assert response.status_code == 202
    sync = Sync.objects.get(pk=response.json()["id"])
    assert sync.status == "completed" and sync.provider_account.upstream_id == "a1"
    assert_error(charlie.client.post(f"{BASE}/accounts/{account.pk}/sync"), 404, "not_found")
    unlinked = alice.account()
    body = assert_error(
        alice.client.post(f"{BASE}/accounts/{unlinked.pk}/sync"), 422, "validation_failed"
    )
    assert "not linked" in body["message"]


def test_syncs_list_filters(alice, charlie, upstream):
    connection = connect(alice)
    run_sync(connection)
    upstream.api_keys.clear()
    run_sync(connection)
    listed = alice.client.get(f"{BASE}/syncs", {"connection_id": str(connection.pk)}).json()
    assert len(listed["syncs"]) == 2
    failed = alice.client.get(f"{BASE}/syncs", {"status": "failed"}).json()["syncs"]
    assert [s["status"] for s in failed] == ["failed"] and "401" in failed[0]["error"]
    assert (
        alice.client.get(f"{BASE}/syncs", {"status": "completed"}).json()["pagination"][
            "total_count"
        ]
        == 1
    )
    assert charlie.client.get(f"{BASE}/syncs").json()["syncs"] == []
    assert_error(alice.client.get(f"{BASE}/syncs", {"status": "done"}), 422, "validation_failed")
    assert_error(
        alice.client.get(f"{BASE}/syncs", {"connection_id": "x"}), 422, "validation_failed"
    )
    assert_error(charlie.client.get(f"{BASE}/syncs/{failed[0]['id']}"), 404, "not_found")
    connection.refresh_from_db()
    got = alice.client.get(f"{BASE}/provider_connections/{connection.pk}").json()
    assert got["status"] == "requires_update" and "401" in got["error"]


def test_delete_keeps_the_ledger_and_unlinks(alice, upstream):
    connection = connect(alice)
    run_sync(connection)
    response = alice.client.delete(f"{BASE}/provider_connections/{connection.pk}")
    assert response.status_code == 200
    assert response.json() == {"message": "Provider connection deleted"}
    assert not ProviderAccount.objects.exists() and not Sync.objects.exists()
    assert Account.objects.filter(family=alice.family).count() == 2
    assert Transaction.objects.filter(family=alice.family).count() == 1


def test_secrets_never_appear_in_api_output_or_sync_records(alice, upstream, caplog):
    connection = connect(alice)
    run_sync(connection)
    upstream.api_keys.clear()
    run_sync(connection)
    outputs = [
        alice.client.get(f"{BASE}/provider_connections").content,
        alice.client.get(f"{BASE}/syncs").content,
        alice.client.get(f"{BASE}/provider_connections/{connection.pk}/accounts").content,
    ]
    records = [json.dumps(list(Sync.objects.values("error", "stats")), default=str)]
    for text in [*map(bytes.decode, outputs), *records, caplog.text]:
        assert "test-key" not in text


def test_reconnect_in_place_keeps_every_link(alice, charlie, upstream):
    connection = connect(alice)
    run_sync(connection)
    linked = {pa.upstream_id: pa.account_id for pa in ProviderAccount.objects.all()}
    upstream.api_keys = {"new-key"}
    run_sync(connection)
    connection.refresh_from_db()
    assert connection.status == "requires_update"
    response = create(
        alice, {"provider": "lunchflow", "api_key": "new-key", "connection_id": str(connection.pk)}
    )
    assert response.status_code == 200, response.content
    assert response.json()["id"] == str(connection.pk) and response.json()["status"] == "good"
    assert {pa.upstream_id: pa.account_id for pa in ProviderAccount.objects.all()} == linked
    assert ProviderConnection.objects.get().credential == "new-key"
    assert run_sync(connection).status == "completed"
    body = assert_error(
        create(
            charlie,
            {"provider": "lunchflow", "api_key": "new-key", "connection_id": str(connection.pk)},
        ),
        422,
        "validation_failed",
    )
    assert body["errors"][0].startswith("connection_id:")
