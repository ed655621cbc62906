"""Transfers (suggested and confirmed) and rejected transfers."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from finance.api.resource_docs import NOT_FOUND
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
    list_order = "newest first by the outflow's date"
    base_queryset = transfer_base_queryset
    selector = transfer_list
    create_service = transfer_create
    reload_after_write = True
    notes = {
        "list": "Suggested (`pending`) and `confirmed` transfers: an outflow of one account and "
        "the inflow it became in another. `account_id` matches either leg, `start_date` and "
        "`end_date` the outflow's date.",
        "create": "Links an inflow (a negative amount: money entering) and an outflow (a "
        "positive amount) of two of the household's accounts as a confirmed transfer, whatever "
        "their amounts (an exchange between currencies is a transfer too), and forgets an "
        "earlier rejection of the pair. A leg already in a transfer is a 409.",
    }

    @extend_schema(
        summary="Confirm a transfer",
        description="Confirms a suggested transfer and answers it. " + NOT_FOUND,
        request=None,
        responses=TransferSerializer,
    )
    @action(detail=True, methods=["post"])
    def confirm(self, request: Request, pk: str) -> Response:
        return self.answer(transfer_confirm(transfer=self.get_object()))

    @extend_schema(
        summary="Reject a transfer",
        description="Not a transfer: both legs become standard transactions again and the pair "
        "is never suggested again. Answers the rejected transfer. " + NOT_FOUND,
        request=None,
        responses=RejectedTransferSerializer,
    )
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, pk: str) -> Response:
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
    list_order = "newest first by the outflow's date"
    notes = {
        "list": "Pairs of transactions rejected as transfers, which are never suggested again. "
        "Legs show their amounts in the ledger sign; `account_id` matches either leg, "
        "`start_date` and `end_date` the outflow's date.",
    }
