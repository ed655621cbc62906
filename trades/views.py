"""API viewsets of this app and their routes: securities, trades, holdings, security prices."""

from __future__ import annotations

from rest_framework.routers import SimpleRouter

from finance.api.resources import (
    CreateMixin,
    ListMixin,
    ReadOnlyResourceViewSet,
    ResourceViewSet,
    RetrieveMixin,
)
from trades import docs
from trades.models import Holding, Security, SecurityPrice, Trade
from trades.selectors import (
    HoldingFilters,
    SecurityFilters,
    SecurityPriceFilters,
    TradeFilters,
    holding_base_queryset,
    holding_list,
    security_list,
    security_price_base_queryset,
    security_price_list,
    trade_base_queryset,
    trade_list,
)
from trades.serializers import (
    HoldingSerializer,
    SecurityPriceRequestSerializer,
    SecurityPriceSerializer,
    SecuritySerializer,
    TradeCreatedSerializer,
    TradeCreateRequestSerializer,
    TradeSerializer,
    TradeUpdateRequestSerializer,
)
from trades.services import trade_create, trade_delete, trade_update
from trades.services.prices import security_price_set
from trades.services.securities import securities_visible


class SecurityViewSet(ReadOnlyResourceViewSet):
    model = Security
    noun, results_key = "security", "securities"
    serializer_class = SecuritySerializer
    filters = SecurityFilters
    base_queryset = securities_visible  # the shared reference securities and the household's
    selector = security_list
    list_order = "by ticker"
    notes = {
        "list": "The shared reference securities (created from tickers, seen by every "
        "household) and the household's own manual ones. `search` matches part of the ticker "
        "or the name; `ticker` an exact ticker, optionally `TICKER|MIC`.",
    }


class TradeViewSet(ResourceViewSet):
    model = Trade
    root_key, results_key = "trade", "trades"
    serializer_class = TradeSerializer
    create_request = TradeCreateRequestSerializer
    update_request = TradeUpdateRequestSerializer
    create_response = TradeCreatedSerializer  # a Trade, or the Transaction a deposit recorded
    filters = TradeFilters
    base_queryset = trade_base_queryset
    selector = trade_list
    create_service = trade_create
    update_service = trade_update
    delete_service = trade_delete
    reload_after_write = True
    notes = docs.TRADE_NOTES
    examples = {"create": docs.TRADE_EXAMPLES}


class HoldingViewSet(ReadOnlyResourceViewSet):
    model = Holding
    noun, results_key = "holding", "holdings"
    serializer_class = HoldingSerializer
    filters = HoldingFilters
    base_queryset = holding_base_queryset
    selector = holding_list
    list_order = "by account, then ticker"
    notes = {
        "list": "Positions of the household's investment and crypto accounts: quantity, "
        "price, cost basis (average cost), market value. They follow the account's trades, or, "
        "for an account linked to a provider that reports holdings, the provider (`source`).",
    }


class SecurityPriceViewSet(ListMixin, RetrieveMixin, CreateMixin):
    model = SecurityPrice
    root_key = "security_price"
    noun, results_key = "security price", "security_prices"
    serializer_class = SecurityPriceSerializer
    create_request = SecurityPriceRequestSerializer
    filters = SecurityPriceFilters
    base_queryset = security_price_base_queryset
    selector = security_price_list
    create_service = security_price_set
    idempotent_create = True
    reload_after_write = True
    list_order = "newest day first"
    notes = {
        "list": "The household's price points of securities: its own (`api`), its trades' "
        "and its providers'. Investment and crypto accounts are valued with the latest point "
        "on or before each day.",
        "create": "Records the household's price of a security on a day: 201 when new, 200 "
        "when it replaced the household's own price of that day and currency. The accounts "
        "holding the security are valued with it from that day on.",
    }


def register(router: SimpleRouter) -> None:
    """Register this app's viewsets on the /api/v1 router."""
    router.register("securities", SecurityViewSet, basename="security")
    router.register("trades", TradeViewSet, basename="trade")
    router.register("holdings", HoldingViewSet, basename="holding")
    router.register("security_prices", SecurityPriceViewSet, basename="security-price")
