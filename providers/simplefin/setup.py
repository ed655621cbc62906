"""Reconnecting a connection in place with a new credential (a new SimpleFIN setup token).

`POST /provider_connections/{id}/reconnect` is the same operation as `POST
/provider_connections` with `connection_id` (providers.services.connection_create): the new
token is claimed and checked (one balances-only read) before anything changes; then the access
URL is replaced, the status goes back to `good` and every provider account keeps its link
(provider accounts are keyed by upstream id, so a reconnect never re-creates them). A token
that cannot be used is a 422 and leaves the connection exactly as it was."""

from __future__ import annotations

from typing import Unpack

from providers.models import ProviderConnection
from providers.services import connection_create
from providers.types import CredentialFields


def connection_reconnect(
    *, connection: ProviderConnection, **credential: Unpack[CredentialFields]
) -> ProviderConnection:
    reconnected, _ = connection_create(
        family=connection.family,
        provider=connection.provider,
        connection_id=connection.pk,
        **credential,
    )
    return reconnected
