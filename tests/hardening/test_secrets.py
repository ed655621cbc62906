"""Issue 10 item 7 (secrets): our API key's plain text, a Lunch Flow API key (and a wrong one
the user typed) and a SimpleFIN access URL's user and password never appear in the logs (every
logger at DEBUG, SQL included), in any API response (every GET list and detail endpoint, walked
from the URL configuration, and the error bodies), in the admin (list and change page of every
registered model, as the household user and as a superuser), or in the database (every column
of every table: credentials are ciphertext; syncs' error and stats are clean).

Syncs run for real against both fake providers, including failing ones whose upstream error
text echoes the credential back."""

from __future__ import annotations

import base64
import logging
import re
import secrets as random_secrets
from collections.abc import Iterator

import pytest
from django.apps import apps
from django.contrib import admin
from django.db import connection as db
from django.test import Client

from finance.models import ApiKey
from finance.services.api_keys import api_key_create
from finance.services.households import household_permissions_grant
from providers.models import ProviderConnection, Sync
from providers.simplefin.credentials import AccessUrl
from providers.testing import simplefin_pytest
from providers.testing.lunchflow_server import Fault
from providers.testing.simplefin_demo import demo_scenario
from tests.conftest import make_client
from tests.factories import UserFactory
from tests.providers.conftest import day
from tests.tenancy import api_routes

simplefin_server = simplefin_pytest.simplefin_server
BASE = "/api/v1"


@pytest.fixture
def every_log(caplog, settings) -> Iterator[pytest.LogCaptureFixture]:
    """caplog at DEBUG on every logger (including those that do not propagate), SQL too."""
    settings.DEBUG = True  # Django logs every SQL statement with its parameters
    caplog.set_level(logging.DEBUG)
    saved = []
    for logger in [logging.getLogger(n) for n in list(logging.root.manager.loggerDict)]:
        saved.append((logger, logger.level, logger.disabled))
        logger.setLevel(logging.DEBUG)
        logger.disabled = False
        if not logger.propagate:
            logger.addHandler(caplog.handler)
    try:
        yield caplog
    finally:
        for logger, level, disabled in saved:
            logger.setLevel(level)
            logger.disabled = disabled
            if caplog.handler in logger.handlers:
                logger.removeHandler(caplog.handler)


def _post_sync(household, connection_id: str, capture) -> dict:
    with capture(execute=True):
        response = household.client.post(f"{BASE}/provider_connections/{connection_id}/sync")
    assert response.status_code == 202, response.content
    return household.client.get(f"{BASE}/syncs/{response.json()['id']}").json()


def _find(secrets: dict[str, str], text: str, where: str) -> list[str]:
    return [f"{name} in {where}" for name, value in secrets.items() if value in text]


@pytest.mark.django_db
def test_no_secret_anywhere(
    alice, lunchflow, simplefin_server, settings, every_log, django_capture_on_commit_callbacks
):
    settings.SIMPLEFIN_RETRY_BASE_DELAY = 0.001
    settings.PROVIDER_HTTP_TIMEOUT = 1.0
    capture = django_capture_on_commit_callbacks
    bodies: list[tuple[str, str]] = []  # (where, body) of every response seen

    def keep(where: str, response) -> dict:
        bodies.append((where, response.content.decode(errors="replace")))
        return response

    # GIVEN an API key of ours
    _, extra_key = api_key_create(user=alice.user, name="extra", scope=ApiKey.SCOPE_READ_WRITE)
    # AND a Lunch Flow connection (after a wrong key was tried first)
    lf_key = "lfk-" + random_secrets.token_hex(12)
    wrong_key = "lfk-wrong-" + random_secrets.token_hex(8)
    lunchflow.scenario.api_keys = {lf_key}
    lunchflow.scenario.add_account("a1", "Checking", "EUR", "10")
    lunchflow.scenario.add_transaction("a1", "t1", day(3), -5, "coffee", "Cafe")
    refused = keep(
        "POST connection (wrong key)",
        alice.client.post(
            f"{BASE}/provider_connections",
            {"provider": "lunchflow", "api_key": wrong_key},
            format="json",
        ),
    )
    assert refused.status_code == 422
    created = keep(
        "POST connection (lunchflow)",
        alice.client.post(
            f"{BASE}/provider_connections",
            {"provider": "lunchflow", "api_key": lf_key},
            format="json",
        ),
    )
    assert created.status_code == 201, created.content
    lf_id = created.json()["id"]
    # AND a SimpleFIN connection
    sf_scenario = demo_scenario()
    created = keep(
        "POST connection (simplefin)",
        alice.client.post(
            f"{BASE}/provider_connections",
            {
                "provider": "simplefin",
                "setup_token": simplefin_server.create_setup_token(sf_scenario),
            },
            format="json",
        ),
    )
    assert created.status_code == 201, created.content
    sf_id = created.json()["id"]
    access_url = ProviderConnection.objects.get(pk=sf_id).credential
    access = AccessUrl.parse(access_url)
    secret = {
        "our API key": alice.key,
        "our read key": alice.read_key,
        "our extra key": extra_key,
        "Lunch Flow key": lf_key,
        "wrong Lunch Flow key": wrong_key,
        "SimpleFIN user": access.username,
        "SimpleFIN password": access.password,
        "SimpleFIN basic token": base64.b64encode(
            f"{access.username}:{access.password}".encode()
        ).decode(),
    }

    # WHEN syncs run, good and bad, some with upstream errors that echo the credential
    results = [_post_sync(alice, lf_id, capture), _post_sync(alice, sf_id, capture)]
    lunchflow.scenario.faults["/accounts/a1/transactions"] = Fault(
        status=500, body={"error": "Internal", "message": f"bad key {lf_key} for x-api-key"}
    )
    results.append(_post_sync(alice, lf_id, capture))
    lunchflow.scenario.faults["/accounts/a1/transactions"] = Fault(kind="cut")
    results.append(_post_sync(alice, lf_id, capture))
    lunchflow.scenario.faults["/accounts"] = Fault(
        status=401, body={"error": "Unauthorized", "message": f"Invalid API key {lf_key}"}
    )
    results.append(_post_sync(alice, lf_id, capture))
    lunchflow.scenario.faults.clear()
    sf_scenario.errors = [f"Login failed for {access_url} ({access.username}:{access.password})"]
    results.append(_post_sync(alice, sf_id, capture))
    simplefin_server.drop_connections(4, paths=("accounts",))
    results.append(_post_sync(alice, sf_id, capture))
    simplefin_server.fault("malformed", paths=("accounts",))
    results.append(_post_sync(alice, sf_id, capture))
    simplefin_server.fail_with(403, paths=("accounts",))
    results.append(_post_sync(alice, sf_id, capture))
    statuses = [r["status"] for r in results]
    assert statuses.count("completed") >= 2 and statuses.count("failed") >= 5, statuses
    # error bodies: 404s, 422s on bad input, an unauthenticated and a bad-key request
    keep("404", alice.client.get(f"{BASE}/provider_connections/{'0' * 32}"))
    keep("422", alice.client.post(f"{BASE}/provider_connections", {"provider": "x"}, format="json"))
    keep("401", make_client(alice.key[:-3] + "xyz").get(f"{BASE}/accounts"))

    # THEN no secret in any GET list or detail body
    for route in api_routes(alice.user, lists=True):
        keep(route.list_url, alice.client.get(route.list_url, {"per_page": 100}))
    for route in api_routes(alice.user):
        if "GET" not in route.methods:
            continue
        for pk in route.model._default_manager.values_list("pk", flat=True)[:25]:
            response = keep(route.url(pk), alice.client.get(route.url(pk)))
            assert response.status_code in (200, 404), (route.pattern, response.status_code)
    leaks = [hit for where, body in bodies for hit in _find(secret, body, where)]

    # AND none in the admin, for the household user and for a superuser
    household_permissions_grant(user=alice.user)
    superuser = UserFactory(email="root@example.com", is_staff=True, is_superuser=True)
    for who, user in (("household user", alice.user), ("superuser", superuser)):
        browser = Client()
        browser.force_login(user)
        for model in admin.site._registry:
            info = (model._meta.app_label, model._meta.model_name)
            page = browser.get(f"/admin/{info[0]}/{info[1]}/")
            leaks += _find(secret, page.content.decode(), f"admin {info} list ({who})")
            for pk in model._default_manager.values_list("pk", flat=True)[:10]:
                page = browser.get(f"/admin/{info[0]}/{info[1]}/{pk}/change/")
                assert page.status_code in (200, 302, 403, 404), (info, page.status_code)
                leaks += _find(secret, page.content.decode(), f"admin {info} change ({who})")

    # AND none in the logs (every logger at DEBUG, SQL with parameters included)
    log_text = every_log.text + "\n".join(r.getMessage() for r in every_log.records)
    assert "SELECT" in log_text and "providers" in log_text  # the capture did capture
    leaks += _find(secret, log_text, "logs")

    # AND none in the database: every column of every table
    with db.cursor() as cursor:
        for model in apps.get_models():
            table = model._meta.db_table
            cursor.execute(f'SELECT * FROM "{table}"')
            for row in cursor.fetchall():
                leaks += _find(secret, repr(row), f"table {table}")
    for sync in Sync.objects.all():
        leaks += _find(secret, f"{sync.error} {sync.stats}", f"sync {sync.pk}")
    for conn in ProviderConnection.objects.all():
        assert re.fullmatch(r"gAAAAA[\w\-=]+", conn.credential_encrypted), "not a Fernet token"

    assert not leaks, sorted(set(leaks))
