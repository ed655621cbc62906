"""Lunch Flow as a ProviderAdapter (see providers.base)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings

from core.errors import ValidationFailed
from providers.base import ProviderAdapter, register_adapter
from providers.http import ProviderHttp
from providers.lunchflow.client import LunchFlowClient
from providers.types import (
    CredentialFields,
    UpstreamAccount,
    UpstreamBalance,
    UpstreamHolding,
    UpstreamTransaction,
)

API_KEY_REQUIRED = "api_key: is required for the lunchflow provider"


@register_adapter
class LunchFlowAdapter(ProviderAdapter):
    provider = "lunchflow"
    label = "Lunch Flow"

    def __init__(self, *, secret: str, http: ProviderHttp, connection: Any = None) -> None:
        super().__init__(secret=secret, http=http, connection=connection)
        self.client = LunchFlowClient(secret, http=http)
        self.history_days = settings.LUNCHFLOW_HISTORY_DAYS

    @classmethod
    def credential_from_request(cls, data: CredentialFields, *, http: ProviderHttp) -> str:
        key = data.get("api_key")
        if not isinstance(key, str) or not key.strip():
            raise ValidationFailed([API_KEY_REQUIRED])
        return key.strip()

    def list_accounts(self) -> list[UpstreamAccount]:
        return self.client.accounts()

    def balance(self, upstream_id: str) -> UpstreamBalance:
        return self.client.balance(upstream_id)

    def transactions(
        self, upstream_id: str, start: dt.date, end: dt.date
    ) -> list[UpstreamTransaction]:
        return self.client.transactions(upstream_id, start, end)

    def holdings(self, upstream_id: str) -> list[UpstreamHolding]:
        return self.client.holdings(upstream_id)
