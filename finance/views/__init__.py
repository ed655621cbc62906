"""Finance API viewsets and their routes."""

from __future__ import annotations

from rest_framework.routers import SimpleRouter

from finance.views.transactions import TransactionViewSet


def register(router: SimpleRouter) -> None:
    router.register("transactions", TransactionViewSet, basename="transaction")
