"""Hardening tests reuse the providers' fake-server fixtures."""

from __future__ import annotations

from tests.providers.conftest import lunchflow  # noqa: F401
