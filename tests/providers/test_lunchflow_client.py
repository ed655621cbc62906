"""The Lunch Flow client against the fake server over real HTTP."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal

import pytest
from django.utils import timezone

from providers.http import ProviderHttp
from providers.lunchflow.client import LunchFlowClient
from providers.testing.lunchflow_server import Fault
from providers.types import HoldingsNotSupported, ProviderError
from tests.providers.conftest import day


def last_year() -> tuple[dt.date, dt.date]:
    """The year up to today, read when the test runs (as `day()` and the fake server read it)."""
    today = timezone.now().date()
    return today - dt.timedelta(days=365), today


def client(key: str = "test-key", **kwargs) -> LunchFlowClient:
    return LunchFlowClient(key, http=ProviderHttp(label="Lunch Flow"), **kwargs)


@pytest.fixture
def one_account(lunchflow):
    lunchflow.scenario.add_account("a1", "Checking", "EUR", 1234.5)
    return lunchflow


def test_accounts_send_the_key_in_x_api_key(one_account):
    accounts = client().accounts()
    assert [(a.upstream_id, a.name, a.currency) for a in accounts] == [("a1", "Checking", "EUR")]
    assert one_account.scenario.requests[0]["headers"]["x-api-key"] == "test-key"


def test_balance_is_decimal_in_account_currency(one_account):
    balance = client().balance("a1")
    assert balance.amount == Decimal("1234.5") and balance.currency == "EUR"


def test_amounts_are_turned_into_the_ledger_sign(one_account):
    one_account.scenario.add_transaction("a1", "out", day(2), -20.25, "Groceries", "Shop")
    one_account.scenario.add_transaction("a1", "in", day(1), 100, "Refund")
    rows = {t.upstream_id: t for t in client().transactions("a1", *last_year())}
    assert rows["out"].amount == Decimal("20.25")  # money out: positive in the ledger
    assert rows["in"].amount == Decimal("-100")
    assert rows["out"].merchant_name == "Shop" and rows["out"].name == "Groceries"


def test_from_and_to_are_sent_inclusive_and_pending_only_when_enabled(one_account, settings):
    one_account.scenario.add_transaction("a1", "p", day(0), -1, "Pending", pending=True)
    year_ago, today = last_year()
    rows = client().transactions("a1", year_ago, today)
    query = one_account.scenario.requests[-1]["query"]
    assert query == {
        "from": year_ago.isoformat(),
        "to": today.isoformat(),
        "include_pending": "true",
    }
    assert [r.pending for r in rows] == [True]

    settings.LUNCHFLOW_INCLUDE_PENDING = False
    assert client().transactions("a1", *last_year()) == []
    assert "include_pending" not in one_account.scenario.requests[-1]["query"]


def test_more_rows_than_one_response_holds_are_all_fetched_by_splitting_the_range(one_account):
    scenario = one_account.scenario
    for n in range(23):
        scenario.add_transaction("a1", f"t{n}", day(n * 3), -n - 1, f"Row {n}")
    scenario.page_size = 4
    rows = client().transactions("a1", *last_year())
    assert sorted(r.upstream_id for r in rows) == sorted(f"t{n}" for n in range(23))
    assert len(scenario.requests) > 6


def test_a_single_day_that_stays_short_fails_instead_of_losing_rows(one_account):
    for n in range(3):
        one_account.scenario.add_transaction("a1", f"t{n}", day(1), -n - 1, "Same day")
    one_account.scenario.page_size = 2
    with pytest.raises(ProviderError, match="returned only 2"):
        client().transactions("a1", *last_year())


def test_401_asks_for_a_new_credential(one_account):
    with pytest.raises(ProviderError) as caught:
        client("wrong-key").accounts()
    assert caught.value.requires_update and caught.value.permanent
    assert "wrong-key" not in caught.value.user_message


def test_429_waits_as_retry_after_says_then_succeeds(one_account):
    one_account.scenario.faults["/accounts"] = Fault(
        status=429, headers={"Retry-After": "1"}, times=1
    )
    started = time.monotonic()
    http = ProviderHttp(label="Lunch Flow")
    accounts = LunchFlowClient("test-key", http=http).accounts()
    assert len(accounts) == 1 and time.monotonic() - started >= 1.0
    assert http.requests_made == 2


def test_429_that_does_not_stop_is_a_transient_error(one_account, settings):
    settings.PROVIDER_MAX_429_WAITS = 1
    one_account.scenario.faults["/accounts"] = Fault(status=429, headers={"Retry-After": "1"})
    with pytest.raises(ProviderError) as caught:
        client().accounts()
    assert not caught.value.permanent and caught.value.retry_after == 1.0


def test_501_holdings_means_not_supported(one_account):
    with pytest.raises(HoldingsNotSupported):
        client().holdings("a1")


def test_holdings_are_parsed(one_account):
    one_account.scenario.holdings["a1"] = [
        {
            "security": {"name": "Apple", "currency": "USD", "tickerSymbol": "AAPL"},
            "quantity": 2.5,
            "price": 200,
            "value": 500,
            "costBasis": 300,
            "currency": "USD",
        }
    ]
    (holding,) = client().holdings("a1")
    assert holding.ticker == "AAPL" and holding.quantity == Decimal("2.5")
    assert holding.value == Decimal("500") and holding.currency == "USD"


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (Fault(kind="drop"), "connect"),
        (Fault(kind="cut"), "dropped"),
        (Fault(kind="malformed"), "not valid JSON"),
        (Fault(kind="shape"), "malformed"),
        (Fault(status=500), "server error"),
        (Fault(kind="slow", delay=5.0), "did not answer in time"),
    ],
)
def test_network_and_data_faults_are_provider_errors(one_account, settings, fault, message):
    settings.PROVIDER_HTTP_TIMEOUT = 2.0  # roomy on a loaded machine; the slow fault is 5 s
    one_account.scenario.faults["/accounts"] = fault
    with pytest.raises(ProviderError, match=message) as caught:
        client().accounts()
    assert not caught.value.requires_update


def test_what_the_fast_json_reader_refuses_is_read_as_before(one_account):
    """Responses are read by orjson, and by json where orjson refuses (providers/http.py): an
    integer past 64 bits in a row still arrives whole."""
    row = one_account.scenario.add_transaction("a1", "big", day(1), -1, "x")
    row["reference"] = 2**70
    (txn,) = client().transactions("a1", *last_year())
    assert txn.raw["reference"] == 2**70 and txn.amount == Decimal("1")


def test_a_transaction_without_an_amount_is_malformed(one_account):
    row = one_account.scenario.add_transaction("a1", "t", day(1), -1, "x")
    del row["amount"]
    with pytest.raises(ProviderError, match="amount"):
        client().transactions("a1", *last_year())


@pytest.mark.parametrize("paging", ["offset", "page"])
def test_a_single_day_with_more_rows_than_a_page_uses_offset_or_page(one_account, paging):
    for n in range(7):
        one_account.scenario.add_transaction("a1", f"t{n}", day(1), -n - 1, "Same day")
    one_account.scenario.page_size = 3
    one_account.scenario.paging = paging
    rows = client().transactions("a1", *last_year())
    assert sorted(r.upstream_id for r in rows) == [f"t{n}" for n in range(7)]


def test_error_messages_never_carry_url_credentials_or_queries():
    from providers.http import redact_url

    url = "https://user:s3cret@bridge.example.com:8443/simplefin/accounts?start-date=1"
    assert redact_url(url) == "https://bridge.example.com:8443/simplefin/accounts"
    http = ProviderHttp(label="SimpleFIN", timeout=0.5)
    with pytest.raises(ProviderError) as caught:
        http.get_json("http://user:s3cret@127.0.0.1:9/accounts?x=1")
    assert "s3cret" not in caught.value.user_message and "x=1" not in caught.value.user_message
