"""Accounts: list, get, create, update, delete (`?cascade=true` with transactions), and the
daily balance series."""

from __future__ import annotations

import datetime as dt

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.filters import QueryFilters
from finance.api.errors import ValidationFailed
from finance.api.viewsets import FamilyViewSet
from finance.ledger import account_balance_series
from finance.models import Account
from finance.money import format_amount
from finance.selectors.ledger import account_list
from finance.serializers.common import DeletedSerializer, deleted_response
from finance.serializers.ledger import (
    AccountCreateRequestSerializer,
    AccountSerializer,
    AccountUpdateRequestSerializer,
    BalanceSeriesSerializer,
)
from finance.services.accounts import account_create, account_delete, account_update

DEFAULT_SERIES_DAYS = 30
MAX_SERIES_DAYS = 3660

_LIST_PARAMS = [
    OpenApiParameter("account_type", str, enum=Account.Type.values),
    OpenApiParameter("status", str, enum=Account.Status.values),
    OpenApiParameter(
        "include_disabled", bool, description="disabled accounts are hidden unless true"
    ),
]


class AccountViewSet(FamilyViewSet):
    serializer_class = AccountSerializer
    results_key = "accounts"

    def get_queryset(self) -> QuerySet[Account]:
        return Account.objects.filter(family=self.family)

    @extend_schema(parameters=_LIST_PARAMS, responses=AccountSerializer(many=True))
    def list(self, request: Request) -> Response:
        return self.paginated(account_list(family=self.family, params=request.query_params))

    @extend_schema(responses=AccountSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(AccountSerializer(self.get_object()).data)

    @extend_schema(request=AccountCreateRequestSerializer, responses={201: AccountSerializer})
    def create(self, request: Request) -> Response:
        body = AccountCreateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        account = account_create(family=self.family, **body.validated_data["account"])
        return Response(AccountSerializer(account).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=AccountUpdateRequestSerializer, responses=AccountSerializer)
    def partial_update(self, request: Request, pk: str) -> Response:
        account = self.get_object()
        body = AccountUpdateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        account = account_update(account=account, **body.validated_data["account"])
        return Response(AccountSerializer(account).data)

    @extend_schema(request=AccountUpdateRequestSerializer, responses=AccountSerializer)
    def update(self, request: Request, pk: str) -> Response:
        return self.partial_update(request, pk)

    @extend_schema(
        parameters=[
            OpenApiParameter("cascade", bool, description="also delete the account's transactions")
        ],
        responses={200: DeletedSerializer},
    )
    def destroy(self, request: Request, pk: str) -> Response:
        account = self.get_object()
        f = QueryFilters(request.query_params)
        cascade = f.boolean("cascade")
        f.check()
        account_delete(account=account, cascade=bool(cascade))
        return deleted_response("Account")

    @extend_schema(
        parameters=[
            OpenApiParameter("start_date", str, description="YYYY-MM-DD; default 30 days back"),
            OpenApiParameter("end_date", str, description="YYYY-MM-DD; default today"),
        ],
        responses=BalanceSeriesSerializer,
    )
    @action(detail=True, methods=["get"])
    def balances(self, request: Request, pk: str) -> Response:
        """End-of-day balances, one per day from the account's first transaction on."""
        account = self.get_object()
        f = QueryFilters(request.query_params)
        start_date, end_date = f.date_range()
        f.check()
        end_date = end_date or max(timezone.localdate(), start_date or timezone.localdate())
        start_date = start_date or end_date - dt.timedelta(days=DEFAULT_SERIES_DAYS - 1)
        if (end_date - start_date).days + 1 > MAX_SERIES_DAYS:
            raise ValidationFailed([f"start_date: the range is at most {MAX_SERIES_DAYS} days"])
        series = account_balance_series(account=account, start_date=start_date, end_date=end_date)
        return Response(
            {
                "account_id": str(account.id),
                "currency": account.currency,
                "start_date": start_date.isoformat(),
                "end_date": end_date.isoformat(),
                "balances": [
                    {
                        "date": day.isoformat(),
                        "balance": format_amount(value, account.currency),
                        "currency": account.currency,
                    }
                    for day, value in series
                ],
            }
        )
