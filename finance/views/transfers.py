"""Transfers (suggested and confirmed) and rejected transfers."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from finance.api.resources import CreateMixin, ReadOnlyResourceViewSet
from finance.models import RejectedTransfer, Transfer
from finance.selectors.ledger import (
    RejectedTransferFilters,
    TransferFilters,
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


class TransferViewSet(ReadOnlyResourceViewSet, CreateMixin):
    model = Transfer
    root_key, results_key = "transfer", "transfers"
    serializer_class = TransferSerializer
    create_request = TransferCreateRequestSerializer
    filters = TransferFilters
    base_queryset = transfer_base_queryset
    selector = transfer_list
    create_service = transfer_create
    reload_after_write = True

    @extend_schema(request=None, responses=TransferSerializer)
    @action(detail=True, methods=["post"])
    def confirm(self, request: Request, pk: str) -> Response:
        return self.answer(transfer_confirm(transfer=self.get_object()))

    @extend_schema(request=None, responses=RejectedTransferSerializer)
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, pk: str) -> Response:
        # Both legs become standard and the pair is never suggested again.
        rejected = transfer_reject(transfer=self.get_object())
        rejected = rejected_transfer_base_queryset(family=self.family).get(pk=rejected.pk)
        return Response(RejectedTransferSerializer(rejected).data)


class RejectedTransferViewSet(ReadOnlyResourceViewSet):
    model = RejectedTransfer
    noun, results_key = "rejected transfer", "rejected_transfers"
    serializer_class = RejectedTransferSerializer
    filters = RejectedTransferFilters
    base_queryset = rejected_transfer_base_queryset
    selector = rejected_transfer_list
