"""`POST /api/v1/provider_connections/{id}/reconnect`: a new credential, every link kept."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from finance.api.viewsets import FamilyViewSet
from providers import docs
from providers.models import ProviderConnection
from providers.selectors import connection_queryset
from providers.serializers import ProviderConnectionSerializer
from providers.simplefin.setup import connection_reconnect


class ConnectionReconnectRequestSerializer(serializers.Serializer):
    setup_token = serializers.CharField(max_length=2048, required=False, write_only=True)
    api_key = serializers.CharField(max_length=1024, required=False, write_only=True)

    class Meta:
        ref_name = "ProviderConnectionReconnect"


@extend_schema(tags=["Provider connections"])
class ConnectionReconnectViewSet(FamilyViewSet):
    """Only the reconnect action: the connection resource lives in providers.views."""

    serializer_class = ProviderConnectionSerializer

    def get_queryset(self) -> QuerySet[ProviderConnection]:
        return connection_queryset(family=self.family)

    @extend_schema(
        summary="Reconnect a connection",
        description=docs.RECONNECT,
        request=ConnectionReconnectRequestSerializer,
        responses={200: ProviderConnectionSerializer},
        operation_id="provider_connection_reconnect",
    )
    @action(detail=True, methods=["post"], url_path="reconnect")
    def reconnect(self, request: Request, pk: str) -> Response:
        connection = self.get_object()
        body = ConnectionReconnectRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        connection_reconnect(connection=connection, **body.validated_data)
        return Response(ProviderConnectionSerializer(self.get_queryset().get(pk=pk)).data)
