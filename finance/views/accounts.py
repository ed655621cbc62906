"""Accounts: list, get, create, update, delete (`?cascade=true` with transactions), and the
daily balance series."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.filters import QueryFilters
from finance.api.errors import ValidationFailed
from finance.api.resources import ResourceViewSet
from finance.ledger import account_balance_series
from finance.models import Account
from finance.money import format_amount
from finance.selectors.ledger import AccountFilters, account_list
from finance.serializers.ledger import (
    AccountCreateRequestSerializer,
    AccountSerializer,
    AccountUpdateRequestSerializer,
    BalanceSeriesSerializer,
)
from finance.services.accounts import account_create, account_delete, account_update

DEFAULT_SERIES_DAYS = 30
MAX_SERIES_DAYS = 3660


class AccountViewSet(ResourceViewSet):
    model = Account
    root_key, results_key = "account", "accounts"
    serializer_class = AccountSerializer
    create_request = AccountCreateRequestSerializer
    update_request = AccountUpdateRequestSerializer
    filters = AccountFilters
    selector = account_list
    create_service = account_create
    update_service = account_update
    delete_service = account_delete
    destroy_parameters = [
        OpenApiParameter("cascade", bool, description="also delete the account's transactions")
    ]
    notes = {
        "list": "Disabled accounts are left out unless `include_disabled=true` or "
        "`status=disabled` is asked for; they stay readable by id. `balance` is the current "
        "balance as a decimal string at the currency's precision.",
        "create": "`name` is required; `account_type` defaults to `depository`, `status` to "
        "`active` and `currency` to the household's currency.",
        "partial_update": "The currency cannot change once the account has transactions (422).",
        "destroy": "An account with transactions or trades is refused with a 409 unless "
        "`cascade=true`, which deletes them with it; the other legs of its transfers become "
        "standard transactions again.",
    }
    examples = {
        "create": [
            OpenApiExample(
                "A checking account",
                summary="A checking account",
                value={
                    "account": {
                        "name": "Everyday checking",
                        "account_type": "depository",
                        "currency": "EUR",
                        "institution_name": "Demo Bank",
                    }
                },
                request_only=True,
            )
        ]
    }

    def destroy_options(self, request: Request) -> dict[str, Any]:
        f = QueryFilters(request.query_params)
        cascade = f.boolean("cascade")
        f.check()
        return {"cascade": bool(cascade)}

    @extend_schema(
        summary="Get an account's daily balances",
        description="The account's end-of-day balance for every day from `start_date` to "
        "`end_date` (both inclusive; by default the last 30 days up to today, at most "
        f"{MAX_SERIES_DAYS} days), in the account's currency. Days before the account's first "
        "transaction are left out; days after its last one carry the latest balance.",
        parameters=[
            OpenApiParameter("start_date", str, description="YYYY-MM-DD; default 30 days back"),
            OpenApiParameter("end_date", str, description="YYYY-MM-DD; default today"),
        ],
        responses=BalanceSeriesSerializer,
    )
    @action(detail=True, methods=["get"])
    def balances(self, request: Request, pk: str) -> Response:
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
