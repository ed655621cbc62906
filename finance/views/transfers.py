"""Transfers (suggested and confirmed) and rejected transfers."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from finance.api.viewsets import FamilyViewSet
from finance.models import RejectedTransfer, Transfer
from finance.selectors.ledger import (
    rejected_transfer_base_queryset,
    rejected_transfer_list,
    transfer_base_queryset,
    transfer_list,
)
from finance.serializers.transfers import (
    RejectedTransferSerializer,
    TransferCreateRequestSerializer,
    TransferSerializer,
)
from finance.services.transfers import transfer_confirm, transfer_create, transfer_reject

_LEG_FILTERS = [
    OpenApiParameter("account_id", str, description="uuid; matches either leg"),
    OpenApiParameter("start_date", str, description="YYYY-MM-DD, on the outflow's date"),
    OpenApiParameter("end_date", str, description="YYYY-MM-DD, on the outflow's date"),
]


class TransferViewSet(FamilyViewSet):
    serializer_class = TransferSerializer
    results_key = "transfers"

    def get_queryset(self) -> QuerySet[Transfer]:
        return transfer_base_queryset(family=self.family)

    def _out(self, transfer: Transfer, code: int = 200) -> Response:
        return Response(TransferSerializer(self.get_queryset().get(pk=transfer.pk)).data, code)

    @extend_schema(
        parameters=[
            *_LEG_FILTERS,
            OpenApiParameter("status", str, enum=Transfer.Status.values),
        ],
        responses=TransferSerializer(many=True),
    )
    def list(self, request: Request) -> Response:
        return self.paginated(transfer_list(family=self.family, params=request.query_params))

    @extend_schema(responses=TransferSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(TransferSerializer(self.get_object()).data)

    @extend_schema(request=TransferCreateRequestSerializer, responses={201: TransferSerializer})
    def create(self, request: Request) -> Response:
        body = TransferCreateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data["transfer"]
        transfer = transfer_create(
            family=self.family,
            inflow_transaction_id=data["inflow_transaction_id"],
            outflow_transaction_id=data["outflow_transaction_id"],
        )
        return self._out(transfer, status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=TransferSerializer)
    @action(detail=True, methods=["post"])
    def confirm(self, request: Request, pk: str) -> Response:
        return self._out(transfer_confirm(transfer=self.get_object()))

    @extend_schema(request=None, responses=RejectedTransferSerializer)
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, pk: str) -> Response:
        """Not a transfer: both legs become standard and the pair is never suggested again.
        Answers the rejected transfer."""
        rejected = transfer_reject(transfer=self.get_object())
        rejected = rejected_transfer_base_queryset(family=self.family).get(pk=rejected.pk)
        return Response(RejectedTransferSerializer(rejected).data)


class RejectedTransferViewSet(FamilyViewSet):
    serializer_class = RejectedTransferSerializer
    results_key = "rejected_transfers"

    def get_queryset(self) -> QuerySet[RejectedTransfer]:
        return rejected_transfer_base_queryset(family=self.family)

    @extend_schema(parameters=_LEG_FILTERS, responses=RejectedTransferSerializer(many=True))
    def list(self, request: Request) -> Response:
        return self.paginated(
            rejected_transfer_list(family=self.family, params=request.query_params)
        )

    @extend_schema(responses=RejectedTransferSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(RejectedTransferSerializer(self.get_object()).data)
