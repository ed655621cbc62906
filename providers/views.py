"""API viewsets of this app and their routes (decisions.md, Provider connections)."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from finance.api.resources import (
    CreateMixin,
    DestroyMixin,
    ListMixin,
    PartialUpdateMixin,
    ReadOnlyResourceViewSet,
    RetrieveMixin,
)
from finance.api.viewsets import FamilyViewSet
from finance.models import Account
from providers import docs
from providers.models import ProviderAccount, ProviderConnection, Sync
from providers.selectors import (
    SyncFilters,
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
class ProviderConnectionViewSet(ListMixin, CreateMixin, RetrieveMixin, DestroyMixin):
    model = ProviderConnection
    noun, plural = "provider connection", "provider connections"
    serializer_class = ProviderConnectionSerializer
    create_request = ConnectionCreateRequestSerializer  # the body holds the fields (no root key)
    base_queryset = connection_queryset
    create_service = connection_create
    delete_service = connection_delete
    instance_arg = "connection"
    idempotent_create = True  # a reconnect in place (`connection_id`) answers 200
    reload_after_write = True
    notes = docs.CONNECTION_NOTES
    examples = {"create": docs.CONNECTION_EXAMPLES}

    @property
    def results_key(self) -> str:  # type: ignore[override]
        return "accounts" if getattr(self, "action", None) == "accounts" else "provider_connections"

    @extend_schema(
        summary="List a connection's provider accounts",
        description=docs.CONNECTION_ACCOUNTS,
        responses=ProviderAccountSerializer(many=True),
    )
    @action(detail=True, methods=["get"], url_path="accounts")
    def accounts(self, request: Request, pk: str) -> Response:
        connection = self.get_object()
        qs = ProviderAccount.objects.filter(connection=connection).order_by("name", "id")
        return self.paginated(qs, ProviderAccountSerializer)

    @extend_schema(
        summary="Sync a connection now",
        description=docs.CONNECTION_SYNC,
        request=None,
        responses={202: SyncSerializer},
    )
    @action(detail=True, methods=["post"], url_path="sync")
    def sync(self, request: Request, pk: str) -> Response:
        sync, _ = sync_request(connection=self.get_object())
        return Response(SyncSerializer(sync).data, status=status.HTTP_202_ACCEPTED)


@extend_schema(tags=TAG)
class ProviderAccountViewSet(RetrieveMixin, PartialUpdateMixin):
    """PATCH only: a provider account has no PUT."""

    model = ProviderAccount
    noun, results_key = "provider account", "provider_accounts"
    serializer_class = ProviderAccountSerializer
    update_request = ProviderAccountUpdateRequestSerializer
    base_queryset = provider_account_queryset
    update_service = provider_account_update
    instance_arg = "provider_account"
    reload_after_write = True
    notes = {"partial_update": docs.PROVIDER_ACCOUNT_UPDATE}


@extend_schema(tags=TAG)
class SyncViewSet(ReadOnlyResourceViewSet):
    model = Sync
    noun, results_key = "sync", "syncs"
    serializer_class = SyncSerializer
    filters = SyncFilters
    base_queryset = sync_queryset
    selector = sync_list
    notes = {"list": docs.SYNCS}


@extend_schema(tags=TAG)
class AccountSyncViewSet(FamilyViewSet):
    """Only `POST /accounts/{id}/sync`: the accounts resource itself lives in finance."""

    serializer_class = SyncSerializer

    def get_queryset(self) -> QuerySet[Account]:
        return Account.objects.filter(family=self.family)

    @extend_schema(
        summary="Sync an account now",
        description=docs.ACCOUNT_SYNC,
        request=None,
        responses={202: SyncSerializer},
        operation_id="account_sync",
    )
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
