"""API viewsets of this app and their routes."""

from __future__ import annotations

from rest_framework.routers import SimpleRouter


def register(router: SimpleRouter) -> None:
    """Register this app's viewsets on the /api/v1 router."""
