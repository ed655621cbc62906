"""API viewsets of this app and their routes (decisions.md, Provider connections)."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from finance.api.viewsets import FamilyViewSet
from finance.models import Account
from finance.serializers.common import DeletedSerializer, deleted_response
from providers.models import ProviderAccount, ProviderConnection, Sync
from providers.selectors import (
    connection_queryset,
    provider_account_queryset,
    sync_list,
    sync_queryset,
)
from providers.serializers import (
    ConnectionCreateRequestSerializer,
    ProviderAccountSerializer,
    ProviderAccountUpdateRequestSerializer,
    ProviderConnectionSerializer,
    SyncSerializer,
)
from providers.services import (
    account_sync_request,
    connection_create,
    connection_delete,
    provider_account_update,
    sync_request,
)

TAG = ["Provider connections"]


@extend_schema(tags=TAG)
class ProviderConnectionViewSet(FamilyViewSet):
    serializer_class = ProviderConnectionSerializer

    @property
    def results_key(self) -> str:  # type: ignore[override]
        return "accounts" if getattr(self, "action", None) == "accounts" else "provider_connections"

    def get_queryset(self) -> QuerySet[ProviderConnection]:
        return connection_queryset(family=self.family)

    @extend_schema(responses=ProviderConnectionSerializer(many=True))
    def list(self, request: Request) -> Response:
        return self.paginated(self.get_queryset())

    @extend_schema(
        request=ConnectionCreateRequestSerializer,
        responses={201: ProviderConnectionSerializer, 200: ProviderConnectionSerializer},
    )
    def create(self, request: Request) -> Response:
        body = ConnectionCreateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        connection, created = connection_create(family=self.family, data=body.validated_data)
        connection = self.get_queryset().get(pk=connection.pk)
        return Response(
            ProviderConnectionSerializer(connection).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(responses=ProviderConnectionSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(ProviderConnectionSerializer(self.get_object()).data)

    @extend_schema(responses={200: DeletedSerializer})
    def destroy(self, request: Request, pk: str) -> Response:
        connection_delete(connection=self.get_object())
        return deleted_response("Provider connection")

    @extend_schema(responses=ProviderAccountSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="accounts")
    def accounts(self, request: Request, pk: str) -> Response:
        connection = self.get_object()
        qs = ProviderAccount.objects.filter(connection=connection).order_by("name", "id")
        return self.paginated(qs, ProviderAccountSerializer)

    @extend_schema(request=None, responses={202: SyncSerializer})
    @action(detail=True, methods=["post"], url_path="sync")
    def sync(self, request: Request, pk: str) -> Response:
        sync, _ = sync_request(connection=self.get_object())
        return Response(SyncSerializer(sync).data, status=status.HTTP_202_ACCEPTED)


@extend_schema(tags=TAG)
class ProviderAccountViewSet(FamilyViewSet):
    serializer_class = ProviderAccountSerializer
    results_key = "provider_accounts"

    def get_queryset(self) -> QuerySet[ProviderAccount]:
        return provider_account_queryset(family=self.family)

    @extend_schema(responses=ProviderAccountSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(ProviderAccountSerializer(self.get_object()).data)

    @extend_schema(
        request=ProviderAccountUpdateRequestSerializer, responses=ProviderAccountSerializer
    )
    def partial_update(self, request: Request, pk: str) -> Response:
        provider_account = self.get_object()
        body = ProviderAccountUpdateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        provider_account_update(provider_account=provider_account, data=body.validated_data)
        return Response(ProviderAccountSerializer(self.get_queryset().get(pk=pk)).data)


@extend_schema(tags=TAG)
class SyncViewSet(FamilyViewSet):
    serializer_class = SyncSerializer
    results_key = "syncs"

    def get_queryset(self) -> QuerySet[Sync]:
        return sync_queryset(family=self.family)

    @extend_schema(
        parameters=[
            OpenApiParameter("connection_id", str, description="uuid"),
            OpenApiParameter("status", str, enum=list(Sync.Status.values)),
        ],
        responses=SyncSerializer(many=True),
    )
    def list(self, request: Request) -> Response:
        return self.paginated(sync_list(family=self.family, params=request.query_params))

    @extend_schema(responses=SyncSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(SyncSerializer(self.get_object()).data)


@extend_schema(tags=TAG)
class AccountSyncViewSet(FamilyViewSet):
    """Only `POST /accounts/{id}/sync`: the accounts resource itself lives in finance."""

    serializer_class = SyncSerializer

    def get_queryset(self) -> QuerySet[Account]:
        return Account.objects.filter(family=self.family)

    @extend_schema(request=None, responses={202: SyncSerializer}, operation_id="account_sync")
    @action(detail=True, methods=["post"], url_path="sync")
    def sync(self, request: Request, pk: str) -> Response:
        sync = account_sync_request(account=self.get_object())
        return Response(SyncSerializer(sync).data, status=status.HTTP_202_ACCEPTED)


def register(router: SimpleRouter) -> None:
    """Register this app's viewsets on the /api/v1 router."""
    router.register(
        "provider_connections", ProviderConnectionViewSet, basename="provider-connection"
    )
    router.register("provider_accounts", ProviderAccountViewSet, basename="provider-account")
    router.register("syncs", SyncViewSet, basename="sync")
    router.register("accounts", AccountSyncViewSet, basename="account-sync")
    # Reconnect in place with a new credential (SimpleFIN issue): providers/simplefin/views.py
    from providers.simplefin.views import ConnectionReconnectViewSet

    router.register(
        "provider_connections", ConnectionReconnectViewSet, basename="provider-connection-reconnect"
    )
