"""Reconnecting a connection in place with a new credential (a new SimpleFIN setup token).

The new token is claimed and checked (one balances-only read) before anything changes; then
the access URL is replaced, the status goes back to `good` and every provider account keeps its
link (provider accounts are keyed by upstream id, so a reconnect never re-creates them). A
token that cannot be used is a 422 and leaves the connection exactly as it was."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from finance.api.errors import ValidationFailed
from providers.base import adapter_class
from providers.http import ProviderHttp
from providers.models import ProviderConnection
from providers.services import CREDENTIAL_FIELD, connection_credential_replace
from providers.sync.engine import budget_add, provider_accounts_upsert
from providers.types import ProviderError

logger = logging.getLogger("providers")

RECONNECT_SYNC_ACTIVE = "a sync of this connection is running; reconnect when it has finished"


def connection_reconnect(
    *, connection: ProviderConnection, data: dict[str, Any]
) -> ProviderConnection:
    cls = adapter_class(connection.provider)
    if cls is None:
        raise ValidationFailed([f"provider: {connection.provider} is not available"])
    field = CREDENTIAL_FIELD.get(connection.provider, "credential")
    http = ProviderHttp(label=cls.label)
    try:
        secret = cls.credential_from_request(data, http=http)
        upstream = cls(secret=secret, http=http).list_accounts()
    except ProviderError as exc:
        raise ValidationFailed(
            [f"{field}: {exc.user_message}"],
            message=f"The {cls.label} credential could not be used: {exc.user_message}",
        ) from None
    with transaction.atomic():
        locked = ProviderConnection.objects.select_for_update().get(pk=connection.pk)
        connection_credential_replace(connection=locked, secret=secret)
        provider_accounts_upsert(connection=locked, upstream=upstream)
        budget_add(locked, http.requests_made)
    logger.info("connection %s reconnected with a new credential", connection.pk)
    return locked
