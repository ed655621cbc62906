"""Outbound URL safety (decisions.md "Outbound requests and limits"), over the API: a SimpleFIN
setup token whose claim URL (or the access URL it returns) points to a non-public address is
a 422 naming `setup_token`, answered at once, with no connection made to anything; redirects
are not followed; a claim is sent exactly once. The suite's settings allow private URLs (the
fakes run on 127.0.0.1): these tests turn that off."""

from __future__ import annotations

import base64
import socket
import time

import pytest

from providers.http import ProviderHttp
from providers.models import ProviderConnection
from providers.outbound import UnsafeAddress, is_public_address
from providers.simplefin.client import SimplefinClient
from providers.testing import simplefin_pytest
from providers.testing.simplefin_demo import demo_scenario
from providers.testing.simplefin_server import FakeSimplefinServer
from providers.types import ProviderError
from tests.conftest import assert_error
from tests.providers.conftest import run_sync
from tests.providers.netservers import TcpServer, connects

BASE = "/api/v1"
simplefin_server = simplefin_pytest.simplefin_server


@pytest.fixture
def public_only(settings) -> None:
    settings.PROVIDER_ALLOW_PRIVATE_URLS = False
    settings.PROVIDER_HTTP_TIMEOUT = 10.0


def _token(url: str) -> str:
    return base64.b64encode(url.encode()).decode()


def _connect(household, token: str):
    household.client.get(f"{BASE}/provider_connections")  # warm: the first request loads a lot
    return household.client.post(
        f"{BASE}/provider_connections",
        {"provider": "simplefin", "setup_token": token},
        format="json",
    )


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


def _assert_refused(response, started: float) -> None:
    elapsed = time.monotonic() - started
    body = assert_error(response, 422, "validation_failed")
    assert body["errors"][0].startswith("setup_token: "), body
    assert "not on the public internet" in body["message"]
    assert elapsed < 2.0, elapsed  # nothing was waited for: no connection, no timeout
    assert not ProviderConnection.objects.exists()


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "localhost", "127.9.9.9", "0.0.0.0", "[::ffff:127.0.0.1]", "2130706433"],
)
def test_a_token_pointing_to_this_host_is_refused_without_connecting(alice, public_only, host):
    with TcpServer("ok") as server:
        url = f"http://{host}:{server.port}/simplefin/claim/abc"
        with connects() as seen:
            started = time.monotonic()
            response = _connect(alice, _token(url))
        _assert_refused(response, started)
        assert server.connections == 0
    assert not [a for a in seen if isinstance(a, tuple) and a[1:2] == (server.port,)]


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_a_token_pointing_to_ipv6_loopback_is_refused_without_connecting(alice, public_only):
    with TcpServer("ok", host="::1") as server:
        with connects() as seen:
            started = time.monotonic()
            response = _connect(alice, _token(f"{server.url}/simplefin/claim/abc"))
        _assert_refused(response, started)
        assert server.connections == 0
    assert not [a for a in seen if isinstance(a, tuple) and a[1:2] == (server.port,)]


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/simplefin/claim/abc",
        "http://10.0.0.1:22/simplefin/claim/abc",
        "http://169.254.169.254/latest/meta-data/",
        "http://192.168.1.1:8080/claim",
        "http://100.64.0.1/claim",
        "http://224.0.0.1/claim",
        "http://240.0.0.1/claim",
        "https://[fe80::1]/claim",
        "https://[fd00::1]:443/claim",
    ],
)
def test_tokens_to_private_networks_are_refused_at_once_without_connecting(alice, public_only, url):
    with connects() as seen:
        started = time.monotonic()
        response = _connect(alice, _token(url))
    _assert_refused(response, started)
    assert seen == []  # not a single socket connected during the request


def test_refusal_is_the_same_whatever_listens_there(alice, public_only):
    """An open port, a closed port and a silent one answer alike: no scanning oracle."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    with TcpServer("ok") as open_, TcpServer("silent") as silent:
        answers = []
        for port in (open_.port, closed_port, silent.port):
            started = time.monotonic()
            response = _connect(alice, _token(f"http://127.0.0.1:{port}/claim/x"))
            _assert_refused(response, started)
            answers.append(response.json()["message"].replace(str(port), "PORT"))
        assert open_.connections == silent.connections == 0
    assert len(set(answers)) == 1, answers


def test_an_access_url_on_a_private_address_is_refused(public_only, simplefin_server):
    access = simplefin_server.access_url_for(demo_scenario())
    client = SimplefinClient(access, http=ProviderHttp(label="SimpleFIN"))
    with pytest.raises(UnsafeAddress) as exc:
        client.info()
    assert exc.value.permanent
    assert simplefin_server.requests == []
    assert client.requests_made == 0  # nothing was sent: nothing spent of the daily budget


def test_a_stored_access_url_that_is_no_longer_allowed_fails_the_sync_without_a_request(
    alice, simplefin_server, settings
):
    response = _connect(alice, simplefin_server.create_setup_token(demo_scenario()))
    assert response.status_code == 201, response.content
    settings.PROVIDER_ALLOW_PRIVATE_URLS = False
    before = len(simplefin_server.requests)
    sync = run_sync(ProviderConnection.objects.get())
    assert sync.status == "failed" and not sync.retryable
    assert "not on the public internet" in sync.error
    assert len(simplefin_server.requests) == before


# --- redirects and the one claim ------------------------------------------------------------


def test_a_claim_that_redirects_is_not_followed(alice):
    with TcpServer("ok") as target:
        location = f"{target.url}/simplefin/claim/real"
        with TcpServer("redirect", location=location) as redirecting:
            response = _connect(alice, _token(f"{redirecting.url}/simplefin/claim/abc"))
            body = assert_error(response, 422, "validation_failed")
            assert "HTTP 302" in body["message"]
            assert redirecting.connections == 1
            assert target.connections == 0


def test_an_access_url_that_redirects_is_not_followed():
    target = TcpServer("ok")
    with target, TcpServer("redirect", location=f"{target.url}/info") as redirecting:
        access = f"http://user:secret@{redirecting.netloc}/simplefin"
        with pytest.raises(ProviderError) as exc:
            SimplefinClient(access).info()
        assert "redirect" in str(exc.value) and exc.value.permanent
        assert "secret" not in str(exc.value)
        assert redirecting.connections == 1 and target.connections == 0


@pytest.mark.parametrize("fault", ["reset", "500", "502"])
def test_a_claim_is_sent_exactly_once_whatever_fails(
    alice, simplefin_server: FakeSimplefinServer, fault
):
    if fault == "reset":
        simplefin_server.drop_connections(5, paths=("claim",))
    else:
        simplefin_server.fail_with(int(fault), 5, paths=("claim",))
    response = _connect(alice, simplefin_server.create_setup_token(demo_scenario()))
    body = assert_error(response, 422, "validation_failed")
    assert body["errors"][0].startswith("setup_token: ")
    assert "not sent again" in body["message"]
    posts = [r for r in simplefin_server.requests if r.method == "POST"]
    assert len(posts) == 1
    assert not ProviderConnection.objects.exists()


# --- the address check ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("2606:4700::1111", True),
        ("127.0.0.1", False),
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("192.168.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.251", False),
        ("255.255.255.255", False),
        ("240.0.0.1", False),
        ("192.0.2.1", False),
        ("::1", False),
        ("::", False),
        ("fe80::1%eth0", False),
        ("fc00::1", False),
        ("ff02::1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:93.184.215.14", True),
        ("2002:7f00:1::", False),  # 6to4 of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", False),  # NAT64 of 169.254.169.254
        ("not an address", False),
    ],
)
def test_what_counts_as_public(address, public):
    assert is_public_address(address) is public


def test_the_address_connected_to_is_the_address_checked(monkeypatch):
    """The host is resolved once per connection and the socket connects to that answer: a
    second, different answer (DNS rebinding) is never asked for."""
    with TcpServer("ok") as first:
        try:
            second = TcpServer("ok", host="127.0.0.2", port=first.port)
        except OSError:
            pytest.skip("127.0.0.2 is not a loopback address here")
        with second:
            answers = iter(["127.0.0.1", "127.0.0.2", "127.0.0.2"])
            calls = []
            real = socket.getaddrinfo

            def resolver(host, port, *args, **kwargs):
                if host == "rebind.test":
                    calls.append(host)
                    return real(next(answers), port, *args, **kwargs)
                return real(host, port, *args, **kwargs)

            monkeypatch.setattr(socket, "getaddrinfo", resolver)
            http = ProviderHttp(label="Test")
            assert http.get_json(f"http://rebind.test:{first.port}/x") == {}
            assert calls == ["rebind.test"]
            assert (first.connections, second.connections) == (1, 0)


def test_a_name_resolving_to_public_and_private_addresses_is_refused(monkeypatch, settings):
    settings.PROVIDER_ALLOW_PRIVATE_URLS = False
    real = socket.getaddrinfo

    def resolver(host, port, *args, **kwargs):
        if host == "mixed.test":
            return real("93.184.215.14", port, *args, **kwargs) + real(
                "127.0.0.1", port, *args, **kwargs
            )
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    with connects() as seen, pytest.raises(UnsafeAddress):
        ProviderHttp(label="Test").request("GET", "http://mixed.test/x", public_only=True)
    assert seen == []


# --- the admin's connection screens take the same road ----------------------------------------


def test_the_admin_refuses_a_private_token_at_once(alice, public_only):
    from django.urls import reverse

    from tests.providers.test_provider_admin import admin_client

    client = admin_client(alice)
    add = reverse("admin:providers_providerconnection_add")
    client.get(add)
    with connects() as seen:
        started = time.monotonic()
        response = client.post(
            add,
            {"provider": "simplefin", "setup_token": _token("http://169.254.169.254/latest/")},
        )
    assert time.monotonic() - started < 2.0
    assert response.status_code == 200
    assert "not on the public internet" in response.content.decode()
    assert seen == [] and not ProviderConnection.objects.exists()


def test_the_admin_waits_on_a_silent_provider_no_longer_than_the_timeout(alice, settings):
    from django.urls import reverse

    from tests.providers.test_provider_admin import admin_client

    settings.PROVIDER_HTTP_TIMEOUT = 1.0
    client = admin_client(alice)
    add = reverse("admin:providers_providerconnection_add")
    client.get(add)
    with TcpServer("drip") as server:
        started = time.monotonic()
        response = client.post(
            add, {"provider": "simplefin", "setup_token": _token(f"{server.url}/claim/x")}
        )
        elapsed = time.monotonic() - started
        assert server.connections == 1
    assert response.status_code == 200 and "did not answer in time" in response.content.decode()
    assert elapsed < 1.8, elapsed
