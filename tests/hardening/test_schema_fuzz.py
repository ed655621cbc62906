"""Schema fuzzing with schemathesis: every operation of /api/v1/openapi.json, with a valid key.

No 5xx, every status and body as documented, every 4xx in the one error shape. Bounded for CI
(FUZZ_EXAMPLES, default 10 per operation); `make fuzz` runs a longer pass."""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conftest import make_household

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "10"))


@pytest.fixture
def keep_connection(db):
    """In-process WSGI calls would close the test's database connection around each request
    (Django's own test client avoids that the same way)."""
    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (signals.request_started, signals.request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def api_schema(keep_connection):
    return schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())


@pytest.fixture
def fuzz_key(keep_connection, settings):
    # The document lists the providers and shows example credentials, so the fuzzer connects
    # for real: Lunch Flow at a local port nobody listens on (SimpleFIN's example token is not
    # a claim URL), never a provider on the internet.
    settings.LUNCHFLOW_BASE_URL = "http://127.0.0.1:9/api/v1"
    household = make_household("fuzzer")
    household.account(name="Fuzz checking")
    return household.key


schema = schemathesis.pytest.from_fixture("api_schema")


def error_shape(ctx, response, case):
    """Every 4xx answers {"error": str, "message": str, ...} as JSON."""
    if 400 <= response.status_code < 500:
        body = response.json()
        assert isinstance(body, dict) and isinstance(body.get("error"), str), body
        assert isinstance(body.get("message"), str), body


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def test_api_conforms_to_its_schema(case, fuzz_key):
    response = case.call(headers={"X-Api-Key": fuzz_key})
    case.validate_response(
        response,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
            error_shape,
        ],
    )
