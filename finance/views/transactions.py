"""Transactions: list, get, create (idempotent by external id), update, delete, and bulk
create; the operations' client documentation is in finance/views/transaction_docs.py."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.collector import cycles_paused
from finance.api.resources import ResourceViewSet
from finance.models import Transaction
from finance.selectors.transactions import (
    TransactionFilters,
    transaction_base_queryset,
    transaction_list,
)
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
from finance.views import transaction_docs as docs


class TransactionViewSet(ResourceViewSet):
    model = Transaction
    root_key, results_key = "transaction", "transactions"
    serializer_class = TransactionSerializer
    create_request = TransactionCreateRequestSerializer
    update_request = TransactionUpdateRequestSerializer
    filters = TransactionFilters
    base_queryset = transaction_base_queryset
    selector = transaction_list
    create_service = transaction_create
    update_service = transaction_update
    delete_service = transaction_delete
    instance_arg = "txn"
    list_order = "newest first (by date, then creation time)"
    idempotent_create = True  # an (account, source, external_id) already stored: 200
    reload_after_write = True
    notes = docs.NOTES
    examples = {"create": docs.CREATE_EXAMPLES}

    def reloads(self, record: Transaction) -> bool:
        """A row the create wrote and holds whole answers as written, without a re-read."""
        return not getattr(record, Transaction.AS_WRITTEN, False)

    @extend_schema(
        request=TransactionBulkRequestDocSerializer,
        responses={200: TransactionBulkResponseSerializer},
        summary="Create many transactions",
        description=docs.BULK,
        examples=docs.BULK_EXAMPLES,
    )
    @action(detail=False, methods=["post"], url_path="bulk")
    def bulk(self, request: Request) -> Response:
        # Up to 1,000 items make several containers each and no reference cycle: the
        # collector's young collections (one per 700 new containers) found nothing to free,
        # ~5 ms of a request's CPU (core/collector.py).
        with cycles_paused():
            body = TransactionBulkRequestSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            items = transaction_bulk_items_validate(body.validated_data["transactions"])
            results = transactions_bulk_create(family=self.family, items=items)
            loaded = {r.transaction.pk: r.transaction for r in results if not r.reload}
            ids = [r.transaction.pk for r in results if r.transaction is not None and r.reload]
            if ids:
                loaded.update((t.pk, t) for t in self.get_queryset().filter(pk__in=ids))
            return Response(transaction_bulk_response(results, loaded))
