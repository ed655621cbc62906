"""The European Central Bank adapter: the eurofxref format read as a stream and safely, over
real HTTP to the fake ECB server."""

from __future__ import annotations

import datetime as dt
import io
import tracemalloc
from decimal import Decimal

import pytest

from providers.ecb.client import EcbRates
from providers.ecb.parsing import ParseNotes, ecb_days
from providers.testing.ecb_server import HISTORY, FakeEcb, Scenario, demo_scenario
from providers.types import ProviderError

REAL_SHAPE = b"""<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender>
		<gesmes:name>European Central Bank</gesmes:name>
	</gesmes:Sender>
	<Cube>
		<Cube time='2024-05-17'>
			<Cube currency='USD' rate='1.0866'/>
			<Cube currency='JPY' rate='169.04'/>
			<Cube currency='IDR' rate='17340.77'/>
		</Cube>
		<Cube time='2024-05-16'>
			<Cube currency='USD' rate='1.0855'/>
		</Cube>
	</Cube>
</gesmes:Envelope>
"""


def test_the_published_shape_reads_as_days_newest_first():
    days = list(ecb_days(io.BytesIO(REAL_SHAPE)))
    assert [d.date for d in days] == [dt.date(2024, 5, 17), dt.date(2024, 5, 16)]
    assert days[0].rates == {
        "USD": Decimal("1.0866"),
        "JPY": Decimal("169.04"),
        "IDR": Decimal("17340.77"),
    }


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"<html><body>Maintenance</body></html>", "root element is <html>"),
        (b"<gesmes:Envelope xmlns:gesmes='x'><Cube>", "not valid or safe XML"),
        (
            b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
            b"<Envelope>&e;</Envelope>",
            "not valid or safe XML",
        ),
        (b"<Envelope><Cube></Cube></Envelope>", "holds no dated rates"),
        (b"", "not valid or safe XML"),
    ],
)
def test_what_is_not_a_rates_file_is_a_provider_error(body, why):
    with pytest.raises(ProviderError, match=why):
        list(ecb_days(io.BytesIO(body)))


def test_odd_entries_are_skipped_with_a_reason():
    body = REAL_SHAPE.replace(b"'169.04'", b"'-1'").replace(b"2024-05-16", b"2024-13-16")
    notes = ParseNotes()
    days = list(ecb_days(io.BytesIO(body), notes=notes))
    assert [d.rates for d in days] == [{"USD": Decimal("1.0866"), "IDR": Decimal("17340.77")}]
    assert notes.skipped == 2
    assert any("JPY" in r for r in notes.reasons) and any("2024-13-16" in r for r in notes.reasons)


def test_the_history_file_streams_day_by_day():
    """3,000 days x 30 currencies (~4 MB; the real file has ~7,000 days): the parse holds a
    day at a time, not the tree."""
    scenario = Scenario()
    currencies = (
        "USD JPY BGN CZK DKK GBP HUF PLN RON SEK CHF ISK NOK TRY AUD "
        "BRL CAD CNY HKD IDR ILS INR KRW MXN MYR NZD PHP SGD THB ZAR"
    ).split()
    first = dt.date(1999, 1, 4)
    for n in range(3000):
        scenario.days[first + dt.timedelta(days=n)] = dict.fromkeys(currencies, "1.2345")
    body = scenario.document(HISTORY)
    assert len(body) > 3_500_000
    stream = io.BytesIO(body)
    tracemalloc.start()
    count = 0
    for _ in ecb_days(stream):
        count += 1
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert count == 3000
    assert peak < 3_000_000, peak  # a whole tree of the file would be several times its size


def test_the_client_over_http_maps_statuses_and_refusals():
    server = FakeEcb(demo_scenario(days=30)).start()
    try:
        client = EcbRates(base_url=server.base_url + "/")
        days = list(client.days(EcbRates.NINETY_DAYS))
        assert days and all(set(d.rates) >= {"USD", "GBP"} for d in days)
        assert client.requests_made == 1
        missing = EcbRates(base_url=server.base_url + "/nowhere")
        with pytest.raises(ProviderError, match="HTTP 404") as caught:
            list(missing.days(EcbRates.DAILY))
        assert caught.value.permanent
    finally:
        server.stop()
    port = server.server_address[1]
    with pytest.raises(ProviderError, match="Could not reach"):
        gone = EcbRates(base_url=f"http://127.0.0.1:{port}/stats/eurofxref")
        gone.NETWORK_RETRIES = 0
        list(gone.days(EcbRates.DAILY))
