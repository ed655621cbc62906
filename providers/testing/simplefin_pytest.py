"""Pytest fixtures for the fake SimpleFIN server: import them into a test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from providers.testing.simplefin_server import FakeSimplefinServer


@pytest.fixture
def simplefin_server() -> Iterator[FakeSimplefinServer]:
    server = FakeSimplefinServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fast_retries(settings) -> None:
    """Retry backoff in milliseconds so network-failure tests run fast."""
    settings.SIMPLEFIN_RETRY_BASE_DELAY = 0.001
