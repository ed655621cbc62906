from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from finance.api.viewsets import FamilyViewSet
from finance.models import Transaction
from finance.selectors.transactions import transaction_base_queryset, transaction_list
from finance.serializers.common import DeletedSerializer, deleted_response
from finance.serializers.transactions import (
    TransactionBulkRequestDocSerializer,
    TransactionBulkRequestSerializer,
    TransactionBulkResponseSerializer,
    TransactionCreateRequestSerializer,
    TransactionSerializer,
    TransactionUpdateRequestSerializer,
    transaction_bulk_items_validate,
    transaction_bulk_response,
)
from finance.services.transactions import (
    transaction_create,
    transaction_delete,
    transaction_update,
)
from finance.services.transactions_bulk import transactions_bulk_create

_LIST_PARAMS = [
    OpenApiParameter("account_id", str, description="uuid"),
    OpenApiParameter("account_ids[]", {"type": "array", "items": {"type": "string"}}),
    OpenApiParameter("category_id", str, description="uuid"),
    OpenApiParameter("merchant_id", str, description="uuid"),
    OpenApiParameter("tag_ids[]", {"type": "array", "items": {"type": "string"}}),
    OpenApiParameter("start_date", str, description="YYYY-MM-DD, inclusive"),
    OpenApiParameter("end_date", str, description="YYYY-MM-DD, inclusive"),
    OpenApiParameter("min_amount", str, description="ledger-signed amount, inclusive"),
    OpenApiParameter("max_amount", str, description="ledger-signed amount, inclusive"),
    OpenApiParameter("type", str, enum=["income", "expense"]),
    OpenApiParameter("pending", bool),
    OpenApiParameter("search", str, description="name, notes and merchant name"),
]


class TransactionViewSet(FamilyViewSet):
    serializer_class = TransactionSerializer
    results_key = "transactions"

    def get_queryset(self) -> QuerySet[Transaction]:
        return transaction_base_queryset(family=self.family)

    def _reload(self, txn: Transaction) -> Transaction:
        return self.get_queryset().get(pk=txn.pk)

    @extend_schema(parameters=_LIST_PARAMS, responses=TransactionSerializer(many=True))
    def list(self, request: Request) -> Response:
        return self.paginated(transaction_list(family=self.family, params=request.query_params))

    @extend_schema(responses=TransactionSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(TransactionSerializer(self.get_object()).data)

    @extend_schema(
        request=TransactionCreateRequestSerializer,
        responses={201: TransactionSerializer, 200: TransactionSerializer},
    )
    def create(self, request: Request) -> Response:
        body = TransactionCreateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        txn, created = transaction_create(family=self.family, **body.validated_data["transaction"])
        return Response(
            TransactionSerializer(self._reload(txn)).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(
        request=TransactionBulkRequestDocSerializer,
        responses={200: TransactionBulkResponseSerializer},
        description=(
            "Create up to 1,000 transactions, each under the rules of the single create. "
            "Answers 200 with one result per item, in order: status 201 (created), 200 "
            "(existing: same account, source and external_id, stored before or earlier in this "
            "request) or 422 with that item's errors. A missing, empty or oversized "
            "`transactions` list is a 422 for the whole request."
        ),
    )
    @action(detail=False, methods=["post"], url_path="bulk")
    def bulk(self, request: Request) -> Response:
        body = TransactionBulkRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        items = transaction_bulk_items_validate(body.validated_data["transactions"])
        results = transactions_bulk_create(family=self.family, items=items)
        loaded = {r.transaction.pk: r.transaction for r in results if not r.reload}
        ids = [r.transaction.pk for r in results if r.transaction is not None and r.reload]
        if ids:
            loaded.update((t.pk, t) for t in self.get_queryset().filter(pk__in=ids))
        return Response(transaction_bulk_response(results, loaded))

    @extend_schema(request=TransactionUpdateRequestSerializer, responses=TransactionSerializer)
    def partial_update(self, request: Request, pk: str) -> Response:
        txn = self.get_object()
        body = TransactionUpdateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        transaction_update(txn=txn, **body.validated_data["transaction"])
        return Response(TransactionSerializer(self._reload(txn)).data)

    @extend_schema(request=TransactionUpdateRequestSerializer, responses=TransactionSerializer)
    def update(self, request: Request, pk: str) -> Response:
        return self.partial_update(request, pk)

    @extend_schema(responses={200: DeletedSerializer})
    def destroy(self, request: Request, pk: str) -> Response:
        transaction_delete(txn=self.get_object())
        return deleted_response("Transaction")
