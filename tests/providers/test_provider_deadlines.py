"""Time and request bounds of the provider seam: a provider call inside an API request ends
within PROVIDER_HTTP_TIMEOUT in all (retries and waits included), whatever the upstream does
(never answers, drips a byte at a time, keeps dropping); a worker's attempt ends by the same
timeout; the SimpleFIN daily budget stops the seam's sends, retries included."""

from __future__ import annotations

import base64
import time

import pytest

from providers.http import ProviderHttp, ProviderNetworkError
from providers.models import ProviderConnection
from providers.testing import simplefin_pytest
from providers.testing.simplefin_demo import demo_scenario
from providers.testing.simplefin_server import FakeSimplefinServer
from providers.types import ProviderError
from tests.conftest import assert_error
from tests.providers.conftest import run_sync
from tests.providers.netservers import TcpServer

BASE = "/api/v1"
TIMEOUT = 1.0
SLACK = 0.8  # thread start-up, the test client, a loaded machine
simplefin_server = simplefin_pytest.simplefin_server


@pytest.fixture(autouse=True)
def _short(settings) -> None:
    settings.PROVIDER_HTTP_TIMEOUT = TIMEOUT
    settings.SIMPLEFIN_HISTORY_DAYS = 45


def _post(household, body: dict):
    household.client.get(f"{BASE}/provider_connections")  # warm: the first request loads a lot
    started = time.monotonic()
    response = household.client.post(f"{BASE}/provider_connections", body, format="json")
    return response, time.monotonic() - started


def _token(url: str) -> str:
    return base64.b64encode(url.encode()).decode()


@pytest.mark.parametrize("behaviour", ["silent", "drip"])
def test_a_claim_to_a_server_that_never_answers_ends_within_the_timeout(alice, behaviour):
    with TcpServer(behaviour) as server:
        response, elapsed = _post(
            alice, {"provider": "simplefin", "setup_token": _token(f"{server.url}/claim/x")}
        )
        body = assert_error(response, 422, "validation_failed")
        assert body["errors"][0].startswith("setup_token: ")
        assert "did not answer in time" in body["message"]
        assert server.connections == 1  # sent once, not again
    assert TIMEOUT * 0.9 <= elapsed < TIMEOUT + SLACK, elapsed


@pytest.mark.parametrize("behaviour", ["silent", "drip"])
def test_a_lunchflow_key_check_against_a_silent_server_ends_within_the_timeout(
    alice, settings, behaviour
):
    with TcpServer(behaviour) as server:
        settings.LUNCHFLOW_BASE_URL = f"{server.url}/api/v1"
        response, elapsed = _post(alice, {"provider": "lunchflow", "api_key": "k"})
        body = assert_error(response, 422, "validation_failed")
        assert body["errors"][0].startswith("api_key: ")
    assert elapsed < TIMEOUT + SLACK, elapsed


def test_retries_inside_a_request_stop_at_the_deadline(
    alice, simplefin_server: FakeSimplefinServer, settings
):
    """SimpleFIN retries a dropped read three times with backoff; inside a request the
    retries that would end after the deadline are not made."""
    settings.SIMPLEFIN_RETRY_BASE_DELAY = 0.4  # 0.4-0.8, 0.8-1.2, 1.6-2.0 s: > 1 s in all
    simplefin_server.drop_connections(10, paths=("accounts",))
    token = simplefin_server.create_setup_token(demo_scenario())
    response, elapsed = _post(alice, {"provider": "simplefin", "setup_token": token})
    assert_error(response, 422, "validation_failed")
    assert elapsed < TIMEOUT + SLACK, elapsed
    assert 1 <= len(simplefin_server.requests_to("accounts")) < 4


def test_slow_info_and_accounts_share_one_deadline(alice, simplefin_server, settings):
    simplefin_server.fault("slow", delay=0.7, paths=("info",))
    simplefin_server.fault("slow", delay=0.7, paths=("accounts",))
    token = simplefin_server.create_setup_token(demo_scenario())
    response, elapsed = _post(alice, {"provider": "simplefin", "setup_token": token})
    # 0.7 + 0.7 > 1.0: each alone fits the per-request timeout, together they do not
    assert_error(response, 422, "validation_failed")
    assert elapsed < TIMEOUT + SLACK, elapsed


def test_a_worker_attempt_against_a_dripping_server_ends_by_the_timeout():
    """Socket timeouts bound each read; the attempt's deadline bounds their sum."""
    with TcpServer("drip") as server:
        started = time.monotonic()
        with pytest.raises(ProviderNetworkError, match="did not answer in time"):
            ProviderHttp(label="Test", timeout=TIMEOUT).get_json(f"{server.url}/x")
    assert time.monotonic() - started < TIMEOUT + SLACK


def test_a_worker_retries_with_backoff_beyond_the_request_timeout(simplefin_server, settings):
    """Without a total deadline (a worker), every retry is made."""
    from providers.simplefin.client import SimplefinClient

    sleeps: list[float] = []
    simplefin_server.drop_connections(3, paths=("info",))
    http = ProviderHttp(label="SimpleFIN", sleep=sleeps.append)
    client = SimplefinClient(
        simplefin_server.access_url_for(demo_scenario()), http=http, backoff_base=5.0
    )
    assert client.info()
    assert len(sleeps) == 3 and sum(sleeps) >= 35.0
    assert http.requests_made == 4


# --- the request budget -------------------------------------------------------------------------


def test_the_seam_sends_nothing_past_its_request_limit():
    with TcpServer("ok") as server:
        http = ProviderHttp(label="Test")
        http.limit_requests(2, message="No requests left today.", retry_after=60)
        http.get_json(server.url)
        http.get_json(server.url)
        with pytest.raises(ProviderError) as exc:
            http.get_json(server.url)
        assert exc.value.user_message == "No requests left today."
        assert exc.value.retry_after == 60
        assert server.connections == 2 and http.requests_made == 2


def test_simplefin_retries_stop_at_the_daily_budget(alice, simplefin_server, settings):
    settings.SIMPLEFIN_RETRY_BASE_DELAY = 0.001
    settings.PROVIDER_HTTP_TIMEOUT = 5.0
    settings.SIMPLEFIN_DAILY_REQUEST_LIMIT = 4
    token = simplefin_server.create_setup_token(demo_scenario())
    response, _ = _post(alice, {"provider": "simplefin", "setup_token": token})
    assert response.status_code == 201, response.content  # /info + /accounts: 2 of 4
    connection = ProviderConnection.objects.get()
    before = len(simplefin_server.requests_to("accounts"))
    simplefin_server.drop_connections(3, paths=("accounts",))
    sync = run_sync(connection)
    assert sync.status == "failed" and "requests for the day" in sync.error
    assert len(simplefin_server.requests_to("accounts")) - before == 2  # not 4
    connection.refresh_from_db()
    assert connection.daily_request_count == 4
    assert sync.stats["requests_made"] == 2


def test_a_huge_daily_limit_still_syncs(alice, simplefin_server, settings):
    """60 days x 12,333 requests once reached back before year 1 (an internal error)."""
    settings.SIMPLEFIN_RETRY_BASE_DELAY = 0.001
    settings.PROVIDER_HTTP_TIMEOUT = 5.0
    settings.SIMPLEFIN_DAILY_REQUEST_LIMIT = 50_000
    token = simplefin_server.create_setup_token(demo_scenario())
    response, _ = _post(alice, {"provider": "simplefin", "setup_token": token})
    assert response.status_code == 201, response.content
    sync = run_sync(ProviderConnection.objects.get())
    assert sync.status == "completed", sync.error
