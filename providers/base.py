"""The provider adapter interface and its registry.

An adapter turns one provider's protocol into the typed values of `providers.types`; the sync
engine (`providers.sync`) turns those into ledger writes and never sees raw JSON or HTTP.
To plug a provider in, subclass ProviderAdapter in `providers/<name>/adapter.py`, decorate it
with `@register_adapter`, and import the module in `providers/adapters.py` (ADAPTER_MODULES).

    class ProviderAdapter:
        provider = "lunchflow"          # ProviderConnection.provider and Transaction.source
        label = "Lunch Flow"            # the name users read in errors

        # Class level, at connection time (POST /provider_connections):
        credential_from_request(data: CredentialFields, *, http) -> str
            Validate the credential the household sent (`api_key`, `setup_token`); raise
            ValidationFailed (422) naming the field when it is missing or malformed. Exchange
            it when the protocol says so (SimpleFIN claims the setup token) and return the
            secret to store encrypted (API key, access URL).
            Upstream refusals raise ProviderError; the API turns them into a 422 saying why.

        # Instance level: adapter = Adapter(secret=..., http=ProviderHttp(...), connection=...)
        list_accounts() -> list[UpstreamAccount]
            Discovery; also verifies the credential.
        sync_window(*, connection, today) -> (start, end)
            Dates of the transactions to read (both inclusive). The base class reads
            `history_days` back on a first sync, then from the last completed sync's end minus
            SYNC_OVERLAP_DAYS (`overlap_window`), up to today; and back to the earliest row
            still pending in the ledger (`pending_since`), so a long hold upstream still lists
            is seen. A stored row outside the window is not judged by the sync.
        balance(upstream_id) -> UpstreamBalance
        transactions(upstream_id, start, end) -> list[UpstreamTransaction]   # LEDGER sign
            Every row of the window or an exception: never a partial list.
        holdings(upstream_id) -> list[UpstreamHolding]
            Raise HoldingsNotSupported when the provider says so; the engine marks the
            provider account and does not ask again. `supports_holdings = False` skips it.
        messages() -> list[str]
            Sanitised upstream notices to show on the connection (SimpleFIN `errors`).
        check_budget(connection) -> None
            Raise ProviderError when the connection has used its request budget.
        budget_allows_scheduled_sync(connection) -> bool   (classmethod)
            False skips the connection in the scheduled refresh.

Errors: raise ProviderError (permanent / requires_update / retry_after) for everything; the
engine records `user_message` (which must never hold a credential) on the Sync and the
connection. The shared ProviderHttp counts requests; the engine stores the count in
Sync.stats["requests_made"] and adds it to the connection's daily budget."""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

from django.conf import settings
from django.db.models import Min

from providers.http import ProviderHttp
from providers.types import (
    CredentialFields,
    ProviderError,
    UpstreamAccount,
    UpstreamBalance,
    UpstreamHolding,
    UpstreamTransaction,
)

_REGISTRY: dict[str, type[ProviderAdapter]] = {}


def days_before(day: dt.date, days: int) -> dt.date:
    """`day` minus `days`, never before 1 January of year 1 (however large `days` is)."""
    return day - dt.timedelta(days=max(min(days, (day - dt.date.min).days), 0))


class ProviderAdapter:
    provider: ClassVar[str] = ""
    label: ClassVar[str] = ""
    supports_holdings: ClassVar[bool] = True
    history_days: ClassVar[int] = 365

    def __init__(self, *, secret: str, http: ProviderHttp, connection: Any = None) -> None:
        self.secret = secret
        self.http = http
        self.connection = connection

    @classmethod
    def credential_from_request(cls, data: CredentialFields, *, http: ProviderHttp) -> str:
        raise NotImplementedError

    def list_accounts(self) -> list[UpstreamAccount]:
        raise NotImplementedError

    def overlap_window(self, *, connection: Any, today: dt.date) -> tuple[dt.date, dt.date]:
        """`history_days` back on a first sync, else from the last completed sync's end minus
        SYNC_OVERLAP_DAYS; to today."""
        from providers.models import Sync

        last = (
            Sync.objects.filter(
                connection=connection, status=Sync.Status.COMPLETED, window_end__isnull=False
            )
            .order_by("-finished_at")
            .first()
        )
        if last is None:
            return days_before(today, self.history_days), today
        start = days_before(last.window_end, settings.SYNC_OVERLAP_DAYS)
        return min(start, today), today

    def sync_window(self, *, connection: Any, today: dt.date) -> tuple[dt.date, dt.date]:
        start, end = self.overlap_window(connection=connection, today=today)
        pending = pending_since(connection, self.provider)
        return (min(start, pending) if pending else start), end

    def balance(self, upstream_id: str) -> UpstreamBalance:
        raise NotImplementedError

    def transactions(
        self, upstream_id: str, start: dt.date, end: dt.date
    ) -> list[UpstreamTransaction]:
        raise NotImplementedError

    def holdings(self, upstream_id: str) -> list[UpstreamHolding]:
        raise NotImplementedError

    def messages(self) -> list[str]:
        return []

    def check_budget(self, connection: Any) -> None:
        return None

    @classmethod
    def budget_allows_scheduled_sync(cls, connection: Any) -> bool:
        """False skips the connection in the scheduled refresh (SimpleFIN's daily budget)."""
        return True


def pending_since(connection: Any, provider: str) -> dt.date | None:
    """The date of the earliest row still pending (and counted) in the ledger accounts the
    connection syncs: a sync reads back at least that far (decisions.md, "Nothing upstream
    still sends is left out")."""
    from finance.models import Transaction

    if connection is None or connection.pk is None:
        return None
    return Transaction.objects.filter(
        account__provider_accounts__connection=connection,
        account__provider_accounts__skipped=False,
        source=provider,
        pending=True,
        excluded=False,
    ).aggregate(first=Min("date"))["first"]


def register_adapter(cls: type[ProviderAdapter]) -> type[ProviderAdapter]:
    _REGISTRY[cls.provider] = cls
    return cls


def adapter_class(provider: str) -> type[ProviderAdapter] | None:
    from providers.adapters import load_adapters

    load_adapters()
    return _REGISTRY.get(provider)


def adapter_for(connection: Any, *, http: ProviderHttp | None = None) -> ProviderAdapter:
    cls = adapter_class(connection.provider)
    if cls is None:
        raise ProviderError(f"The provider {connection.provider!r} is not available.")
    try:
        secret = connection.credential
    except ValueError:
        raise ProviderError(
            "The stored credential can no longer be decrypted (the encryption key changed): "
            "reconnect with a new credential.",
            requires_update=True,
        ) from None
    return cls(secret=secret, http=http or ProviderHttp(label=cls.label), connection=connection)
