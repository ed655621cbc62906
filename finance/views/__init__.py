"""Finance API viewsets and their routes."""

from __future__ import annotations

from django.urls import URLPattern, path
from rest_framework.routers import SimpleRouter

from finance.views.accounts import AccountViewSet
from finance.views.catalog import CategoryViewSet, MerchantViewSet, TagViewSet
from finance.views.fx import CashFlowView, ExchangeRateViewSet, NetWorthView
from finance.views.rules import RuleRunViewSet, RuleViewSet
from finance.views.transactions import TransactionViewSet
from finance.views.transfers import RejectedTransferViewSet, TransferViewSet


def register(router: SimpleRouter) -> None:
    router.register("transactions", TransactionViewSet, basename="transaction")
    router.register("accounts", AccountViewSet, basename="account")
    router.register("categories", CategoryViewSet, basename="category")
    router.register("merchants", MerchantViewSet, basename="merchant")
    router.register("tags", TagViewSet, basename="tag")
    router.register("transfers", TransferViewSet, basename="transfer")
    router.register("rejected_transfers", RejectedTransferViewSet, basename="rejected-transfer")
    router.register("exchange_rates", ExchangeRateViewSet, basename="exchange-rate")
    router.register("rules", RuleViewSet, basename="rule")
    router.register("rule_runs", RuleRunViewSet, basename="rule-run")


def report_urls() -> list[URLPattern]:
    """Reports over the household (one object each, not lists of records)."""
    return [
        path("net_worth", NetWorthView.as_view(), name="net-worth"),
        path("cash_flow", CashFlowView.as_view(), name="cash-flow"),
    ]
