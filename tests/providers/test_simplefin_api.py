"""SimpleFIN end to end over the API against the fake SimpleFIN server (real HTTP, 127.0.0.1):
setup token claim, syncs with and without pending, same-named accounts, dropped connections,
revocation and reconnect, request budget, and credentials nowhere."""

from __future__ import annotations

import base64
import datetime as dt
import itertools
import json
import logging
from decimal import Decimal

import pytest
from django.utils import timezone

from finance.models import Transaction
from providers.models import ProviderAccount, ProviderConnection, Sync
from providers.simplefin.credentials import AccessUrl
from providers.testing import simplefin_pytest
from providers.testing.simplefin_demo import demo_scenario
from providers.testing.simplefin_server import FakeSimplefinServer, Scenario
from tests.conftest import assert_error

BASE = "/api/v1"
simplefin_server = simplefin_pytest.simplefin_server


@pytest.fixture(autouse=True)
def _fast(settings) -> None:
    settings.SIMPLEFIN_RETRY_BASE_DELAY = 0.001
    settings.PROVIDER_HTTP_TIMEOUT = 5.0
    settings.SIMPLEFIN_INCLUDE_PENDING = False
    settings.SIMPLEFIN_HISTORY_DAYS = 45  # one window: request counts stay readable


@pytest.fixture
def scenario() -> Scenario:
    return demo_scenario()


class Api:
    """alice's client plus every response body seen, to check for credentials afterwards."""

    def __init__(self, household, capture) -> None:
        self.household = household
        self.capture = capture
        self.bodies: list[str] = []

    def _keep(self, response):
        self.bodies.append(response.content.decode())
        return response

    def connect(self, token: str):
        return self._keep(
            self.household.client.post(
                f"{BASE}/provider_connections",
                {"provider": "simplefin", "setup_token": token},
                format="json",
            )
        )

    def reconnect(self, connection_id: str, token: str):
        return self._keep(
            self.household.client.post(
                f"{BASE}/provider_connections/{connection_id}/reconnect",
                {"setup_token": token},
                format="json",
            )
        )

    def sync(self, connection_id: str) -> dict:
        with self.capture(execute=True):
            response = self._keep(
                self.household.client.post(f"{BASE}/provider_connections/{connection_id}/sync")
            )
        assert response.status_code == 202, response.content
        return self.get(f"/syncs/{response.json()['id']}")

    def get(self, path: str) -> dict:
        response = self._keep(self.household.client.get(BASE + path))
        assert response.status_code == 200, response.content
        return response.json()


@pytest.fixture
def api(alice, django_capture_on_commit_callbacks) -> Api:
    return Api(alice, django_capture_on_commit_callbacks)


def connected(api: Api, server: FakeSimplefinServer, scenario: Scenario) -> dict:
    response = api.connect(server.create_setup_token(scenario))
    assert response.status_code == 201, response.content
    return response.json()


def access_secrets(connection_id: str) -> list[str]:
    access = AccessUrl.parse(ProviderConnection.objects.get(pk=connection_id).credential)
    return [access.username, access.password, access.authorization.removeprefix("Basic ")]


def assert_secret_free(secrets: list[str], *texts: str) -> None:
    for text in texts:
        for secret in secrets:
            assert secret not in text


# --- setup -------------------------------------------------------------------------------------


def test_claim_creates_the_connection_with_its_accounts(api, simplefin_server, scenario):
    body = connected(api, simplefin_server, scenario)
    assert (body["provider"], body["status"]) == ("simplefin", "good")
    assert sorted(a["upstream_id"] for a in body["accounts"]) == ["ACT-1", "ACT-2", "ACT-3"]
    discovery = simplefin_server.requests_to("accounts")
    assert len(discovery) == 1 and discovery[0].query == {"balances-only": ["1"]}
    assert len(simplefin_server.requests_to("info")) == 1
    assert ProviderConnection.objects.get(pk=body["id"]).daily_request_count == 2
    connection = ProviderConnection.objects.get(pk=body["id"])
    secrets = access_secrets(body["id"])
    assert_secret_free(secrets, connection.credential_encrypted, json.dumps(body))


def test_claiming_a_token_twice_is_a_clear_422_and_creates_nothing(api, simplefin_server):
    token = simplefin_server.create_setup_token(demo_scenario())
    assert api.connect(token).status_code == 201
    body = assert_error(api.connect(token), 422, "validation_failed")
    assert body["errors"][0].startswith("setup_token: ")
    assert "already used" in body["message"] and "compromised" in body["message"]
    assert ProviderConnection.objects.count() == 1
    assert ProviderAccount.objects.count() == 3


@pytest.mark.parametrize(
    ("token", "words"),
    [
        ("%%% not base64 %%%", "not valid base64"),
        (base64.b64encode(b"mailto:someone@example.com").decode(), "http(s) claim URL"),
        ("", "setup_token"),
    ],
)
def test_malformed_tokens_are_422_saying_so(api, token, words):
    body = assert_error(api.connect(token), 422, "validation_failed")
    assert words in json.dumps(body)
    assert not ProviderConnection.objects.exists()


# --- syncing -----------------------------------------------------------------------------------


def test_sync_without_pending(api, simplefin_server, scenario, settings):
    connection = connected(api, simplefin_server, scenario)
    sync = api.sync(connection["id"])
    assert sync["status"] == "completed", sync
    assert sync["stats"]["transactions_added"] == 4
    assert sync["stats"]["transactions_pending"] == 0
    for request in simplefin_server.requests_to("accounts")[1:]:
        assert "pending" not in request.query
        assert set(request.query) == {"start-date", "end-date"}
    grocery = Transaction.objects.get(external_id="TRN-1")
    assert grocery.amount == Decimal("42.50")  # -42.50 upstream: money out
    assert grocery.notes == "weekly shop"
    assert Transaction.objects.get(external_id="TRN-2").amount == Decimal("-2500.00")
    assert not Transaction.objects.filter(pending=True).exists()
    checking = ProviderAccount.objects.get(upstream_id="ACT-1").account
    assert checking.reported_balance == Decimal("1250.40")


def test_first_sync_reads_history_in_60_day_windows(api, simplefin_server, scenario, settings):
    settings.SIMPLEFIN_HISTORY_DAYS = 365
    connection = connected(api, simplefin_server, scenario)
    sync = api.sync(connection["id"])
    windows = [
        (int(r.query["start-date"][0]), int(r.query["end-date"][0]))
        for r in simplefin_server.requests_to("accounts")[1:]
    ]
    assert len(windows) == 7
    assert all(0 < end - start <= 60 * 86400 for start, end in windows)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(windows))
    assert sync["stats"]["requests_made"] == 7
    # a later sync reads from the last good sync minus the overlap: one window
    second = api.sync(connection["id"])
    assert second["status"] == "completed"
    assert second["stats"]["requests_made"] == 1
    assert second["stats"]["transactions_added"] == 0


def test_sync_with_pending_then_omitted_then_posted(api, simplefin_server, scenario, settings):
    settings.SIMPLEFIN_INCLUDE_PENDING = True
    connection = connected(api, simplefin_server, scenario)
    sync = api.sync(connection["id"])
    assert sync["status"] == "completed"
    assert simplefin_server.requests_to("accounts")[-1].query["pending"] == ["1"]
    pending = Transaction.objects.get(external_id="TRN-P1")
    assert pending.pending and pending.amount == Decimal("9.99")

    # the institution leaves pending rows out although asked: nothing is lost or duplicated
    scenario.omit_pending = True
    assert api.sync(connection["id"])["status"] == "completed"
    assert Transaction.objects.filter(external_id="TRN-P1", excluded=False).count() == 1

    # it posts under a new id: the posted row takes the pending one over
    row = scenario.accounts[0]["transactions"][2]
    row.update({"id": "TRN-5", "posted": row["transacted_at"], "pending": False})
    assert api.sync(connection["id"])["status"] == "completed"
    streaming = Transaction.objects.filter(account__provider_accounts__upstream_id="ACT-1")
    assert streaming.filter(amount=Decimal("9.99"), excluded=False).count() == 1
    assert not streaming.filter(pending=True, excluded=False).exists()


def test_two_accounts_with_one_name_keep_separate_links(api, simplefin_server, scenario):
    connection = connected(api, simplefin_server, scenario)
    api.sync(connection["id"])
    one, two = (ProviderAccount.objects.get(upstream_id=i) for i in ("ACT-1", "ACT-2"))
    assert one.name == two.name == "Checking"
    assert one.account_id and two.account_id and one.account_id != two.account_id
    assert Transaction.objects.get(external_id="TRN-3").account_id == two.account_id
    assert two.account.reported_balance == Decimal("310.00")
    # renaming one upstream changes nothing else
    scenario.accounts[1]["name"] = "Joint checking"
    api.sync(connection["id"])
    one.refresh_from_db()
    two.refresh_from_db()
    assert (one.name, two.name) == ("Checking", "Joint checking")
    assert ProviderAccount.objects.count() == 3


def test_dropped_connection_twice_then_success(api, simplefin_server, scenario):
    connection = connected(api, simplefin_server, scenario)
    simplefin_server.drop_connections(2, paths=("accounts",))
    sync = api.sync(connection["id"])
    assert sync["status"] == "completed", sync
    assert sync["stats"]["requests_made"] == 3
    assert Transaction.objects.count() == 4


def test_dropped_connection_four_times_fails_cleanly(api, simplefin_server, scenario, caplog):
    connection = connected(api, simplefin_server, scenario)
    simplefin_server.drop_connections(4, paths=("accounts",))
    with caplog.at_level(logging.DEBUG):
        sync = api.sync(connection["id"])
    assert sync["status"] == "failed"
    assert "after 4 attempts" in sync["error"] and "dropped" in sync["error"]
    assert sync["stats"]["requests_made"] == 4
    state = api.get(f"/provider_connections/{connection['id']}")
    assert state["status"] == "error"
    assert not Transaction.objects.exists()
    assert_secret_free(access_secrets(connection["id"]), caplog.text, *api.bodies)


def test_402_says_payment_is_required(api, simplefin_server, scenario):
    connection = connected(api, simplefin_server, scenario)
    simplefin_server.fail_with(402, paths=("accounts",))
    sync = api.sync(connection["id"])
    assert sync["status"] == "failed" and "payment is required" in sync["error"]
    assert api.get(f"/provider_connections/{connection['id']}")["status"] == "error"


def test_upstream_errors_are_shown_on_the_connection(api, simplefin_server, scenario):
    scenario.errors = ["<i>Demo Bank</i> needs you to log in again"]
    connection = connected(api, simplefin_server, scenario)
    sync = api.sync(connection["id"])
    assert sync["status"] == "completed"
    state = api.get(f"/provider_connections/{connection['id']}")
    assert state["error"] == "Demo Bank needs you to log in again"
    assert Transaction.objects.count() == 4  # the accounts that came back are synced


def test_revoke_requires_update_then_reconnect_keeps_every_link(
    api, simplefin_server, scenario, caplog
):
    connection = connected(api, simplefin_server, scenario)
    api.sync(connection["id"])
    links = {pa.upstream_id: (pa.pk, pa.account_id) for pa in ProviderAccount.objects.all()}
    old_secrets = access_secrets(connection["id"])
    simplefin_server.revoke()

    with caplog.at_level(logging.DEBUG):
        sync = api.sync(connection["id"])
        assert sync["status"] == "failed"
        assert "setup token" in sync["error"]
        state = api.get(f"/provider_connections/{connection['id']}")
        assert state["status"] == "requires_update"

        # a used token does not touch the connection
        used = simplefin_server.create_setup_token(scenario)
        api.connect(used)
        body = assert_error(api.reconnect(connection["id"], used), 422, "validation_failed")
        assert "already used" in body["message"]
        assert api.get(f"/provider_connections/{connection['id']}")["status"] == ("requires_update")

        response = api.reconnect(connection["id"], simplefin_server.create_setup_token(scenario))
        assert response.status_code == 200, response.content
        assert response.json()["status"] == "good" and response.json()["id"] == connection["id"]
        after = {
            pa.upstream_id: (pa.pk, pa.account_id)
            for pa in ProviderAccount.objects.all()
            if pa.connection_id == ProviderConnection.objects.get(pk=connection["id"]).pk
        }
        assert after == links
        sync = api.sync(connection["id"])
        assert sync["status"] == "completed"
        assert sync["stats"]["transactions_added"] == 0  # same rows, same accounts
    api.get("/syncs")
    api.get("/provider_connections")
    api.get(f"/provider_connections/{connection['id']}/accounts")
    new_secrets = access_secrets(connection["id"])
    assert new_secrets != old_secrets
    assert_secret_free(old_secrets + new_secrets, caplog.text, *api.bodies)
    for stored in Sync.objects.values_list("error", flat=True):
        assert_secret_free(old_secrets + new_secrets, stored or "")


def test_reconnect_is_scoped_to_the_household(api, charlie, simplefin_server, scenario):
    connection = connected(api, simplefin_server, scenario)
    response = charlie.client.post(
        f"{BASE}/provider_connections/{connection['id']}/reconnect",
        {"setup_token": simplefin_server.create_setup_token(scenario)},
        format="json",
    )
    assert_error(response, 404, "not_found")


def test_request_budget_stops_syncs_and_the_scheduler(api, simplefin_server, scenario, settings):
    from providers.services import syncs_enqueue_all

    settings.SIMPLEFIN_DAILY_REQUEST_LIMIT = 3
    settings.SIMPLEFIN_HISTORY_DAYS = 30
    connection = connected(api, simplefin_server, scenario)  # 2 requests: /info, /accounts
    assert api.sync(connection["id"])["status"] == "completed"  # 1 more: budget used up
    before = len(simplefin_server.requests)
    sync = api.sync(connection["id"])
    assert sync["status"] == "failed" and "requests for the day" in sync["error"]
    assert len(simplefin_server.requests) == before  # nothing was sent
    assert syncs_enqueue_all() == 0  # the scheduler skips it too
    # the next day the budget is back
    ProviderConnection.objects.filter(pk=connection["id"]).update(
        request_day=timezone.now().date() - dt.timedelta(days=1)
    )
    assert syncs_enqueue_all() == 1


def test_reconnect_through_create_with_connection_id(api, simplefin_server, scenario):
    connection = connected(api, simplefin_server, scenario)
    api.sync(connection["id"])
    links = sorted(ProviderAccount.objects.values_list("pk", "account_id"))
    simplefin_server.revoke()
    assert api.sync(connection["id"])["status"] == "failed"
    response = api.household.client.post(
        f"{BASE}/provider_connections",
        {
            "provider": "simplefin",
            "setup_token": simplefin_server.create_setup_token(scenario),
            "connection_id": connection["id"],
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "good"
    assert ProviderConnection.objects.count() == 1
    assert sorted(ProviderAccount.objects.values_list("pk", "account_id")) == links
    assert api.sync(connection["id"])["status"] == "completed"


def test_history_beyond_a_days_budget_is_cut_to_what_fits(
    api, simplefin_server, scenario, settings
):
    settings.SIMPLEFIN_DAILY_REQUEST_LIMIT = 4
    settings.SIMPLEFIN_HISTORY_DAYS = 3650
    connection = ProviderConnection.objects.get(pk=connected(api, simplefin_server, scenario)["id"])
    ProviderConnection.objects.filter(pk=connection.pk).update(daily_request_count=0)
    sync = api.sync(str(connection.pk))
    assert sync["status"] == "completed", sync
    assert sync["stats"]["requests_made"] == 4


def test_holdings_sent_by_the_server_feed_holdings(api, simplefin_server, scenario):
    from trades.models import Holding

    scenario.accounts[2]["holdings"] = [
        {
            "id": "H1",
            "currency": "USD",
            "cost_basis": "900.00",
            "description": "Total Market",
            "market_value": "1000.00",
            "shares": "10",
            "symbol": "VTI",
        }
    ]
    connection = connected(api, simplefin_server, scenario)
    assert api.sync(connection["id"])["status"] == "completed"
    savings = ProviderAccount.objects.get(upstream_id="ACT-3")
    (holding,) = Holding.objects.filter(account=savings.account_id)
    assert (holding.security.ticker, holding.qty) == ("VTI", Decimal("10"))
    assert savings.holdings_supported is True
    # an account the server sends no holdings for is not asked again
    assert ProviderAccount.objects.get(upstream_id="ACT-1").holdings_supported is False
