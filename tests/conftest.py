"""Shared fixtures: households with keys, an API client per key, helpers for the error shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from finance.models import ApiKey, Family, User
from finance.services.api_keys import api_key_create
from tests.factories import AccountFactory, UserFactory
from tests.ledger_guard import LedgerWriteGuard
from tests.schema_check import check_response


@dataclass
class Household:
    """A persona: a household, its user, and clients for its read_write and read keys."""

    family: Family
    user: User
    key: str
    read_key: str
    client: APIClient
    read_client: APIClient

    def account(self, **kwargs: Any):
        return AccountFactory(family=self.family, **kwargs)


def make_client(key: str | None) -> APIClient:
    client = APIClient()
    if key:
        client.credentials(HTTP_X_API_KEY=key)
    return client


def make_household(name: str) -> Household:
    user = UserFactory(email=f"{name}@example.com", family__name=f"{name.title()} household")
    _, key = api_key_create(user=user, name="rw", scope=ApiKey.SCOPE_READ_WRITE)
    _, read_key = api_key_create(user=user, name="ro", scope=ApiKey.SCOPE_READ)
    return Household(user.family, user, key, read_key, make_client(key), make_client(read_key))


@pytest.fixture(autouse=True)
def _ledger_rows_written_by_the_ledger_only() -> Any:
    """Fail a test in which any module but finance/ledger/ wrote ledger rows."""
    from django.db import connection

    guard = LedgerWriteGuard()
    with connection.execute_wrapper(guard):
        yield guard
    assert not guard.violations, "ledger rows written outside finance/ledger/:\n" + "\n".join(
        dict.fromkeys(guard.violations)
    )


@pytest.fixture(autouse=True)
def _responses_match_their_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every API response a test receives must match the documented OpenAPI schema."""
    original = APIClient.request

    def request(self: APIClient, **kwargs: Any) -> Any:
        response = original(self, **kwargs)
        if not getattr(self, "skip_schema_check", False):
            check_response(
                kwargs.get("REQUEST_METHOD", "GET"),
                kwargs.get("PATH_INFO", ""),
                response.status_code,
                getattr(response, "content", b""),
                response.get("Content-Type", ""),
            )
        return response

    monkeypatch.setattr(APIClient, "request", request)


@pytest.fixture
def alice(db) -> Household:
    return make_household("alice")


@pytest.fixture
def charlie(db) -> Household:
    """A stranger: another household whose data alice must never see."""
    return make_household("charlie")


@pytest.fixture
def anon() -> APIClient:
    return APIClient()


def assert_error(response: Any, status: int, error: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["error"] == error, body
    assert isinstance(body["message"], str) and body["message"]
    return body


def is_postgres() -> bool:
    from django.db import connection

    return connection.vendor == "postgresql"


@pytest.fixture
def postgres_only(db) -> None:
    """Concurrency and isolation tests only mean something on PostgreSQL."""
    if not is_postgres():
        pytest.skip("needs PostgreSQL (make test runs the suite there too)")
