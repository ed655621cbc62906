"""API viewsets of this app and their routes: securities, trades, holdings, security prices."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from finance.api.viewsets import FamilyViewSet
from finance.serializers.common import DeletedSerializer, deleted_response
from trades.models import Holding, Security, SecurityPrice, Trade
from trades.selectors import (
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


class SecurityViewSet(FamilyViewSet):
    serializer_class = SecuritySerializer
    results_key = "securities"

    def get_queryset(self) -> QuerySet[Security]:
        return securities_visible(family=self.family)

    @extend_schema(
        parameters=[
            OpenApiParameter("search", str, description="part of the ticker or name"),
            OpenApiParameter("ticker", str, description="exact ticker, optionally TICKER|MIC"),
        ],
        responses=SecuritySerializer(many=True),
    )
    def list(self, request: Request) -> Response:
        return self.paginated(security_list(family=self.family, params=request.query_params))

    @extend_schema(responses=SecuritySerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(SecuritySerializer(self.get_object()).data)


class TradeViewSet(FamilyViewSet):
    serializer_class = TradeSerializer
    results_key = "trades"
    root_key = "trade"

    def get_queryset(self) -> QuerySet[Trade]:
        return trade_base_queryset(family=self.family)

    def _reload(self, trade: Trade) -> Trade:
        return self.get_queryset().get(pk=trade.pk)

    @extend_schema(
        parameters=[
            OpenApiParameter("account_id", str, description="uuid"),
            OpenApiParameter("security_id", str, description="uuid"),
            OpenApiParameter("start_date", str, description="YYYY-MM-DD, inclusive"),
            OpenApiParameter("end_date", str, description="YYYY-MM-DD, inclusive"),
        ],
        responses=TradeSerializer(many=True),
    )
    def list(self, request: Request) -> Response:
        return self.paginated(trade_list(family=self.family, params=request.query_params))

    @extend_schema(responses=TradeSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(TradeSerializer(self.get_object()).data)

    @extend_schema(request=TradeCreateRequestSerializer, responses={201: TradeCreatedSerializer})
    def create(self, request: Request) -> Response:
        body = TradeCreateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entry = trade_create(family=self.family, **body.validated_data["trade"])
        return Response(TradeCreatedSerializer(entry).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=TradeUpdateRequestSerializer, responses=TradeSerializer)
    def partial_update(self, request: Request, pk: str) -> Response:
        trade = self.get_object()
        body = TradeUpdateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        trade_update(trade=trade, **body.validated_data["trade"])
        return Response(TradeSerializer(self._reload(trade)).data)

    @extend_schema(request=TradeUpdateRequestSerializer, responses=TradeSerializer)
    def update(self, request: Request, pk: str) -> Response:
        return self.partial_update(request, pk)

    @extend_schema(responses={200: DeletedSerializer})
    def destroy(self, request: Request, pk: str) -> Response:
        trade_delete(trade=self.get_object())
        return deleted_response("Trade")


class HoldingViewSet(FamilyViewSet):
    serializer_class = HoldingSerializer
    results_key = "holdings"

    def get_queryset(self) -> QuerySet[Holding]:
        return holding_base_queryset(family=self.family)

    @extend_schema(
        parameters=[OpenApiParameter("account_id", str, description="uuid")],
        responses=HoldingSerializer(many=True),
    )
    def list(self, request: Request) -> Response:
        return self.paginated(holding_list(family=self.family, params=request.query_params))

    @extend_schema(responses=HoldingSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(HoldingSerializer(self.get_object()).data)


class SecurityPriceViewSet(FamilyViewSet):
    """The household's price points: its own (`api`), its trades' and its providers'."""

    serializer_class = SecurityPriceSerializer
    results_key = "security_prices"
    root_key = "security_price"

    def get_queryset(self) -> QuerySet[SecurityPrice]:
        return security_price_base_queryset(family=self.family)

    @extend_schema(
        parameters=[
            OpenApiParameter("security_id", str, description="uuid"),
            OpenApiParameter("start_date", str, description="YYYY-MM-DD, inclusive"),
            OpenApiParameter("end_date", str, description="YYYY-MM-DD, inclusive"),
        ],
        responses=SecurityPriceSerializer(many=True),
    )
    def list(self, request: Request) -> Response:
        return self.paginated(security_price_list(family=self.family, params=request.query_params))

    @extend_schema(responses=SecurityPriceSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(SecurityPriceSerializer(self.get_object()).data)

    @extend_schema(
        request=SecurityPriceRequestSerializer,
        responses={201: SecurityPriceSerializer, 200: SecurityPriceSerializer},
        description="Record the household's price of a security on a day: 201 when new, 200 "
        "when it replaced the household's own price of that day and currency.",
    )
    def create(self, request: Request) -> Response:
        body = SecurityPriceRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        point, created = security_price_set(
            family=self.family, **body.validated_data["security_price"]
        )
        point = self.get_queryset().get(pk=point.pk)
        return Response(
            SecurityPriceSerializer(point).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


def register(router: SimpleRouter) -> None:
    """Register this app's viewsets on the /api/v1 router."""
    router.register("securities", SecurityViewSet, basename="security")
    router.register("trades", TradeViewSet, basename="trade")
    router.register("holdings", HoldingViewSet, basename="holding")
    router.register("security_prices", SecurityPriceViewSet, basename="security-price")
