"""The SimpleFIN client against the fake SimpleFIN server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import base64
import datetime as dt
import logging
from decimal import Decimal

import pytest

from providers.http import ProviderHttp, ProviderNetworkError
from providers.simplefin.client import (
    MSG_ACCESS_REVOKED,
    MSG_PAYMENT_REQUIRED,
    MSG_TOKEN_USED,
    InvalidSetupToken,
    SimplefinClient,
    claim_setup_token,
)
from providers.simplefin.credentials import (
    MSG_TOKEN_NOT_BASE64,
    MSG_TOKEN_NOT_URL,
    AccessUrl,
    decode_setup_token,
)
from providers.testing import simplefin_pytest
from providers.testing.simplefin_demo import demo_scenario
from providers.testing.simplefin_server import FakeSimplefinServer, Scenario
from providers.types import ProviderError

simplefin_server = simplefin_pytest.simplefin_server


def now() -> dt.datetime:
    """Read when the test runs, as the fake server reads it when it builds the scenario."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def last_days(days: int) -> dict[str, dt.datetime]:
    end = now()
    return {"start": end - dt.timedelta(days=days), "end": end}


def _creds(access_url: str) -> tuple[str, str]:
    parsed = AccessUrl.parse(access_url)
    return parsed.username, parsed.password


def _client(server: FakeSimplefinServer, scenario: Scenario | None = None, **kw) -> tuple:
    access = claim_setup_token(server.create_setup_token(scenario or demo_scenario()))
    return SimplefinClient(access, backoff_base=0.001, **kw), access


# --- setup tokens -----------------------------------------------------------------------------


def test_decode_setup_token_gives_the_claim_url() -> None:
    token = base64.b64encode(b"https://bridge.example/simplefin/claim/abc").decode()
    assert decode_setup_token(token) == "https://bridge.example/simplefin/claim/abc"
    assert (
        decode_setup_token(token.rstrip("=") + "\n") == "https://bridge.example/simplefin/claim/abc"
    )


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("not base64 !!!", MSG_TOKEN_NOT_BASE64),
        (base64.b64encode(b"ftp://example.com/claim").decode(), MSG_TOKEN_NOT_URL),
        (base64.b64encode(b"just some words").decode(), MSG_TOKEN_NOT_URL),
        (base64.b64encode(b"\xff\xfe\x00").decode(), MSG_TOKEN_NOT_URL),
    ],
)
def test_malformed_setup_tokens_are_refused_with_a_clear_message(token: str, message: str) -> None:
    with pytest.raises(InvalidSetupToken) as exc:
        decode_setup_token(token)
    assert exc.value.user_message == message
    assert exc.value.permanent


def test_claim_returns_the_access_url_and_a_second_claim_is_refused(
    simplefin_server: FakeSimplefinServer,
) -> None:
    token = simplefin_server.create_setup_token(demo_scenario())
    access = claim_setup_token(token)
    assert access.startswith("http://") and "@127.0.0.1:" in access
    claim = simplefin_server.requests[-1]
    assert claim.method == "POST" and claim.path.startswith("/simplefin/claim/")

    with pytest.raises(InvalidSetupToken) as exc:
        claim_setup_token(token)
    assert exc.value.user_message == MSG_TOKEN_USED
    assert "already used" in str(exc.value) and "compromised" in str(exc.value)


@pytest.mark.parametrize("fault", ["drop", "500"])
def test_a_failed_claim_is_never_sent_again(simplefin_server: FakeSimplefinServer, fault) -> None:
    """A claim URL works once: a reset or a 5xx is reported, not retried (the lost attempt
    may have used the token)."""
    if fault == "drop":
        simplefin_server.drop_connections(3, paths=("claim",))
    else:
        simplefin_server.fail_with(500, 3, paths=("claim",))
    http = ProviderHttp(label="SimpleFIN")
    with pytest.raises(ProviderError) as exc:
        claim_setup_token(simplefin_server.create_setup_token(demo_scenario()), http=http)
    assert exc.value.permanent and "was not sent again" in exc.value.user_message
    posts = [r for r in simplefin_server.requests if r.method == "POST"]
    assert len(posts) == 1
    assert http.requests_made == 0  # a claim is not counted in the access URL's budget


# --- reading --------------------------------------------------------------------------------


def test_info_lists_versions_and_sends_basic_auth_not_url_credentials(
    simplefin_server: FakeSimplefinServer,
) -> None:
    client, access = _client(simplefin_server)
    assert client.info() == ["1.0", "2.0"]
    request = simplefin_server.requests_to("info")[-1]
    assert request.authorized and request.authorization_header
    username, password = _creds(access)
    assert username not in repr(client) and password not in repr(client)


def test_accounts_query_carries_epoch_window_and_no_pending_by_default(
    simplefin_server: FakeSimplefinServer,
) -> None:
    client, _ = _client(simplefin_server, include_pending=False)
    end = now()
    start = end - dt.timedelta(days=60)
    result = client.accounts(start=start, end=end)
    query = simplefin_server.requests_to("accounts")[-1].query
    assert query == {
        "start-date": [str(int(start.timestamp()))],
        "end-date": [str(int(end.timestamp()))],
    }
    assert "pending" not in query
    checking = result.by_id()["ACT-1"]
    assert [t.upstream_id for t in checking.transactions] == ["TRN-1", "TRN-2"]
    assert not any(t.pending for t in checking.transactions)


def test_pending_is_asked_with_pending_1_when_the_setting_is_on(
    simplefin_server: FakeSimplefinServer, settings
) -> None:
    settings.SIMPLEFIN_INCLUDE_PENDING = True
    client, _ = _client(simplefin_server)
    result = client.accounts(**last_days(60))
    assert simplefin_server.requests_to("accounts")[-1].query["pending"] == ["1"]
    pending = [t for t in result.by_id()["ACT-1"].transactions if t.pending]
    assert [t.upstream_id for t in pending] == ["TRN-P1"]
    assert pending[0].amount == Decimal("9.99")  # -9.99 upstream (money out) -> +9.99 ledger


def test_institution_omitting_pending_rows_even_when_asked(
    simplefin_server: FakeSimplefinServer,
) -> None:
    scenario = demo_scenario()
    scenario.omit_pending = True
    client, _ = _client(simplefin_server, scenario, include_pending=True)
    result = client.accounts(**last_days(60))
    assert simplefin_server.requests_to("accounts")[-1].query["pending"] == ["1"]
    assert not any(t.pending for t in result.by_id()["ACT-1"].transactions)


def test_account_balances_only_and_version_parameters(
    simplefin_server: FakeSimplefinServer,
) -> None:
    client, _ = _client(simplefin_server)
    result = client.accounts(account_ids=["ACT-2"], balances_only=True, version=2)
    query = simplefin_server.requests_to("accounts")[-1].query
    assert query == {"account": ["ACT-2"], "balances-only": ["1"], "version": ["2"]}
    assert list(result.by_id()) == ["ACT-2"]
    assert result.accounts[0].transactions == []
    assert result.accounts[0].account.institution_name == "Demo Bank"  # from v2 connections


def test_parsing_signs_balances_dates_payee_memo(simplefin_server: FakeSimplefinServer) -> None:
    at = now()
    client, _ = _client(simplefin_server, demo_scenario(at.timestamp()))
    result = client.accounts(start=at - dt.timedelta(days=60), end=at)
    checking = result.by_id()["ACT-1"]
    assert checking.balance.amount == Decimal("1250.40")
    assert checking.balance.available == Decimal("1200.40")
    assert checking.balance.currency == "USD"
    assert checking.balance.as_of is not None
    grocery, payroll = checking.transactions
    assert grocery.amount == Decimal("42.50")  # -42.50 upstream: money out, positive in ledger
    assert payroll.amount == Decimal("-2500.00")  # deposit: negative in ledger
    assert grocery.name == "GROCERY STORE"
    assert grocery.merchant_name == "Grocery Store"
    assert grocery.notes == "weekly shop"
    assert grocery.date == (at - dt.timedelta(days=3)).date()


def test_two_accounts_with_the_same_name_stay_distinct(
    simplefin_server: FakeSimplefinServer,
) -> None:
    client, _ = _client(simplefin_server)
    result = client.accounts(**last_days(60))
    same = [a for a in result.accounts if a.account.name == "Checking"]
    assert {a.account.upstream_id for a in same} == {"ACT-1", "ACT-2"}
    by_id = result.by_id()
    assert [t.upstream_id for t in by_id["ACT-2"].transactions] == ["TRN-3"]
    assert by_id["ACT-2"].balance.amount == Decimal("310.00")


def test_errors_and_errlist_are_sanitised_without_failing_accounts(
    simplefin_server: FakeSimplefinServer,
) -> None:
    scenario = demo_scenario()
    scenario.errors = ["<b>Connection to Demo Bank</b> may need attention\x07", "dup", "dup"]
    scenario.errlist = [{"code": "con.auth", "msg": "Re-authenticate", "conn_id": "c9"}]
    scenario.connections = [{"conn_id": "c9", "name": "Other Bank"}]
    client, access = _client(simplefin_server, scenario)
    scenario.errors.append(f"failed for {access}")
    result = client.accounts()
    assert len(result.accounts) == 3
    assert result.errors[0] == "Connection to Demo Bank may need attention"
    assert result.errors.count("dup") == 1
    assert "Other Bank: Re-authenticate" in result.errors
    username, password = _creds(access)
    assert not any(username in e or password in e for e in result.errors)


def test_custom_currency_url_is_resolved(simplefin_server: FakeSimplefinServer) -> None:
    scenario = Scenario(
        accounts=[
            {
                "id": "PTS",
                "name": "Rewards",
                "currency": "/currency/points",
                "balance": "1500",
                "balance-date": int(now().timestamp()),
                "transactions": [],
            },
            {
                "id": "EUR",
                "name": "Euro",
                "currency": "/currency/eur",
                "balance": "10",
                "balance-date": int(now().timestamp()),
                "transactions": [],
            },
        ],
        currencies={
            "/currency/points": {"name": "Airline Miles", "abbr": "miles"},
            "/currency/eur": {"name": "Euro", "abbr": "EUR"},
        },
    )
    client, _ = _client(simplefin_server, scenario)
    result = client.accounts().by_id()
    assert result["PTS"].account.currency == "XXX"
    assert result["PTS"].custom_currency.abbr == "miles"
    assert result["PTS"].account.raw["custom_currency"]["name"] == "Airline Miles"
    assert result["EUR"].account.currency == "EUR"


def test_unreadable_balance_leaves_that_account_out_with_a_message(
    simplefin_server: FakeSimplefinServer,
) -> None:
    scenario = demo_scenario()
    scenario.accounts[2]["balance"] = "lots"
    client, _ = _client(simplefin_server, scenario)
    result = client.accounts()
    assert set(result.by_id()) == {"ACT-1", "ACT-2"}
    assert any("Savings" in e and "balance" in e for e in result.errors)


def test_holdings_become_upstream_holdings(simplefin_server: FakeSimplefinServer) -> None:
    scenario = demo_scenario()
    scenario.accounts[2]["holdings"] = [
        {
            "id": "H1",
            "currency": "USD",
            "cost_basis": "900.00",
            "description": "Vanguard Total",
            "market_value": "1000.00",
            "purchase_price": "90",
            "shares": "10",
            "symbol": "VTI",
        }
    ]
    client, _ = _client(simplefin_server, scenario)
    (holding,) = client.accounts().by_id()["ACT-3"].holdings
    assert holding.ticker == "VTI"
    assert holding.quantity == Decimal("10")
    assert holding.value == Decimal("1000.00")
    assert holding.price == Decimal("100")
    assert holding.cost_basis == Decimal("900.00")


# --- failures ---------------------------------------------------------------------------------


def test_two_dropped_connections_then_success(simplefin_server: FakeSimplefinServer) -> None:
    client, _ = _client(simplefin_server)
    simplefin_server.drop_connections(2, paths=("accounts",))
    result = client.accounts()
    assert len(result.accounts) == 3
    assert len(simplefin_server.requests_to("accounts")) == 3
    assert client.requests_made == 3


def test_four_dropped_connections_fail_cleanly(
    simplefin_server: FakeSimplefinServer, caplog
) -> None:
    client, access = _client(simplefin_server)
    simplefin_server.drop_connections(4, paths=("accounts",))
    with caplog.at_level(logging.DEBUG), pytest.raises(ProviderNetworkError) as exc:
        client.accounts()
    assert "after 4 attempts" in exc.value.user_message
    assert "dropped" in exc.value.user_message
    assert not exc.value.permanent and not exc.value.requires_update
    assert len(simplefin_server.requests_to("accounts")) == 4
    _assert_secret_free(access, str(exc.value), repr(exc.value), caplog.text)


def test_refused_connection_is_retried_then_fails(caplog) -> None:
    server = FakeSimplefinServer().start()
    access = server.access_url_for(demo_scenario())
    server.stop()  # nothing listens on that port any more
    sleeps: list[float] = []
    http = ProviderHttp(label="SimpleFIN", sleep=sleeps.append)
    client = SimplefinClient(access, http=http, backoff_base=0.5)
    with caplog.at_level(logging.DEBUG), pytest.raises(ProviderNetworkError) as exc:
        client.info()
    assert "refused" in exc.value.user_message
    assert len(sleeps) == 3
    assert 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 1.5 and 2.0 <= sleeps[2] <= 2.5
    _assert_secret_free(access, str(exc.value), caplog.text)


def test_403_on_accounts_requires_a_new_setup_token(
    simplefin_server: FakeSimplefinServer, caplog
) -> None:
    client, access = _client(simplefin_server)
    simplefin_server.revoke(access)
    with caplog.at_level(logging.DEBUG), pytest.raises(ProviderError) as exc:
        client.accounts()
    assert exc.value.requires_update and exc.value.permanent
    assert exc.value.user_message == MSG_ACCESS_REVOKED
    assert "setup token" in exc.value.user_message
    assert len(simplefin_server.requests_to("accounts")) == 1  # a status is never retried
    _assert_secret_free(access, str(exc.value), caplog.text)


def test_wrong_credentials_are_refused(simplefin_server: FakeSimplefinServer) -> None:
    _, access = _client(simplefin_server)
    _, password = _creds(access)
    wrong = access.replace(password, "nope")
    with pytest.raises(ProviderError) as exc:
        SimplefinClient(wrong).accounts()
    assert exc.value.requires_update


def test_402_says_payment_required(simplefin_server: FakeSimplefinServer) -> None:
    client, _ = _client(simplefin_server)
    simplefin_server.fail_with(402, paths=("accounts",))
    with pytest.raises(ProviderError) as exc:
        client.accounts()
    assert exc.value.user_message == MSG_PAYMENT_REQUIRED
    assert exc.value.permanent and not exc.value.requires_update


def test_429_carries_retry_after(simplefin_server: FakeSimplefinServer) -> None:
    client, _ = _client(simplefin_server)
    simplefin_server.fail_with(429, headers={"Retry-After": "120"}, paths=("accounts",))
    with pytest.raises(ProviderError) as exc:
        client.accounts()
    assert exc.value.retry_after == 120.0
    assert not exc.value.permanent
    assert len(simplefin_server.requests_to("accounts")) == 1


def test_credentials_never_in_logs_or_errors_over_a_whole_session(
    simplefin_server: FakeSimplefinServer, caplog
) -> None:
    with caplog.at_level(logging.DEBUG):
        client, access = _client(simplefin_server, include_pending=True)
        client.info()
        client.accounts(**last_days(30))
        simplefin_server.fail_with(402)
        with pytest.raises(ProviderError) as exc:
            client.accounts()
    assert "SimpleFIN" in caplog.text  # requests were logged...
    _assert_secret_free(access, caplog.text, str(exc.value), repr(client))  # ...without secrets


def _assert_secret_free(access_url: str, *texts: str) -> None:
    username, password = _creds(access_url)
    basic = AccessUrl.parse(access_url).authorization.removeprefix("Basic ")
    for text in texts:
        assert password not in text
        assert username not in text
        assert basic not in text


def test_same_account_id_at_two_institutions_stays_two_accounts(
    simplefin_server: FakeSimplefinServer,
) -> None:
    scenario = demo_scenario()
    twin = dict(scenario.accounts[2], org={"domain": "other.example", "name": "Other Bank"})
    duplicate = dict(scenario.accounts[1])
    scenario.accounts += [twin, duplicate]
    client, _ = _client(simplefin_server, scenario)
    result = client.accounts()
    assert sorted(result.by_id()) == ["ACT-1", "ACT-2", "ACT-3", "other.example:ACT-3"]
    assert any("twice" in e for e in result.errors)


def test_what_the_fast_json_reader_refuses_is_read_as_before(
    simplefin_server: FakeSimplefinServer,
) -> None:
    """Responses are read by orjson, and by json where orjson refuses (providers/http.py,
    `response_json`): an integer past 64 bits in a transaction still arrives whole."""
    at = now()
    scenario = demo_scenario(at.timestamp())
    scenario.accounts[0]["transactions"][0]["reference"] = 2**70
    client, _ = _client(simplefin_server, scenario)
    grocery = client.accounts(**last_days(60)).by_id()["ACT-1"].transactions[0]
    assert grocery.raw["reference"] == 2**70
    assert grocery.amount == Decimal("42.50")
