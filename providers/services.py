"""Writes of the providers app: connections, provider-account links, sync requests, settling."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from typing import TypedDict, Unpack

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.errors import ValidationFailed
from core.tasks import enqueue_on_commit
from finance.models import Account, Family
from providers.base import adapter_class
from providers.http import ProviderHttp
from providers.models import ProviderAccount, ProviderConnection, Sync
from providers.sync.engine import budget_add, provider_accounts_upsert
from providers.sync.lock import sync_runner_alive
from providers.types import CredentialFields, ProviderError

logger = logging.getLogger("providers")

PROVIDERS = tuple(ProviderConnection.Provider.values)
PROVIDER_INVALID = "provider: must be one of " + ", ".join(PROVIDERS)
PROVIDER_NOT_AVAILABLE = "provider: {} is not available on this server yet"
ACCOUNT_NOT_IN_HOUSEHOLD = "account_id: does not exist in this household"
ACCOUNT_ALREADY_LINKED = "account_id: is already linked to another provider account"
CONNECTION_NOT_IN_HOUSEHOLD = "connection_id: no connection of this provider in this household"
ACCOUNT_NOT_LINKED = "account_id: this account is not linked to a provider connection"
CREDENTIAL_FIELD = {"lunchflow": "api_key", "simplefin": "setup_token"}
STUCK_ERROR = "The sync was interrupted (the worker stopped) and has been marked failed."
NEVER_STARTED_ERROR = "The sync never started (the queue lost it) and has been marked failed."


class ProviderAccountFields(TypedDict, total=False):
    account_id: uuid.UUID | str | None  # the ledger account to sync into; None: a new one
    skipped: bool


def connection_create(
    *,
    family: Family,
    provider: str,
    connection_id: uuid.UUID | None = None,
    **credential: Unpack[CredentialFields],
) -> tuple[ProviderConnection, bool]:
    """Check the credential with the provider (discovery runs), then store it encrypted.

    With `connection_id` (a connection of this household and provider, e.g. one in
    `requires_update`) the new credential replaces the old one in place, keeping every
    account link: `(connection, False)`."""
    if provider not in PROVIDERS:
        raise ValidationFailed([PROVIDER_INVALID])
    existing = None
    if connection_id is not None:
        existing = ProviderConnection.objects.filter(
            family=family, provider=provider, pk=connection_id
        ).first()
        if existing is None:
            raise ValidationFailed([CONNECTION_NOT_IN_HOUSEHOLD])
    cls = adapter_class(provider)
    if cls is None:
        raise ValidationFailed([PROVIDER_NOT_AVAILABLE.format(provider)])
    # Inside an API or admin request: every provider call together within PROVIDER_HTTP_TIMEOUT.
    http = ProviderHttp.for_request(label=cls.label)
    field = CREDENTIAL_FIELD.get(provider, "credential")
    try:
        secret = cls.credential_from_request(credential, http=http)
        upstream = cls(secret=secret, http=http).list_accounts()
    except ProviderError as exc:
        raise ValidationFailed(
            [f"{field}: {exc.user_message}"],
            message=f"The {cls.label} credential could not be used: {exc.user_message}",
        ) from None
    with transaction.atomic():
        if existing is not None:
            connection_credential_replace(connection=existing, secret=secret)
            connection = existing
        else:
            connection = ProviderConnection(family=family, provider=provider, name=cls.label)
            connection.credential = secret
            connection.save()
        provider_accounts_upsert(connection=connection, upstream=upstream)
        budget_add(connection, http.requests_made)
    return connection, existing is None


def connection_credential_replace(*, connection: ProviderConnection, secret: str) -> None:
    """Reconnect in place (a new key or access URL): every account link is kept."""
    connection.credential = secret
    connection.status = ProviderConnection.Status.GOOD
    connection.error = None
    connection.save(update_fields=["credential_encrypted", "status", "error", "updated_at"])


def connection_delete(*, connection: ProviderConnection) -> None:
    """The ledger accounts and their transactions stay; only the links and syncs go."""
    connection.delete()


def provider_account_update(
    *, provider_account: ProviderAccount, **fields: Unpack[ProviderAccountFields]
) -> None:
    """Link the provider account to a ledger account (None: a new one at the next sync), or
    skip it; only the fields given change."""
    family = provider_account.connection.family
    changed = ["updated_at"]
    if "account_id" in fields:
        account = None
        if fields["account_id"] is not None:
            account = Account.objects.filter(family=family, pk=fields["account_id"]).first()
            if account is None:
                raise ValidationFailed([ACCOUNT_NOT_IN_HOUSEHOLD])
            taken = (
                ProviderAccount.objects.filter(account=account)
                .exclude(pk=provider_account.pk)
                .exists()
            )
            if taken:
                raise ValidationFailed([ACCOUNT_ALREADY_LINKED])
        provider_account.account = account
        changed.append("account")
    if "skipped" in fields:
        provider_account.skipped = fields["skipped"]
        changed.append("skipped")
    provider_account.save(update_fields=changed)


def sync_request(
    *,
    connection: ProviderConnection,
    provider_account: ProviderAccount | None = None,
    attempt: int = 0,
    countdown: float | None = None,
) -> tuple[Sync, bool]:
    """A pending Sync, enqueued after commit; or the connection's active one (created=False)."""
    try:
        with transaction.atomic():
            sync = Sync.objects.create(
                connection=connection, provider_account=provider_account, attempt=attempt
            )
    except IntegrityError:
        active = Sync.objects.filter(connection=connection, status__in=Sync.ACTIVE).first()
        if active is None:
            raise
        return active, False
    enqueue_on_commit("providers.sync", str(sync.pk), countdown=countdown)
    return sync, True


def account_sync_request(*, account: Account) -> Sync:
    provider_account = (
        ProviderAccount.objects.filter(account=account, skipped=False)
        .select_related("connection")
        .first()
    )
    if provider_account is None:
        raise ValidationFailed([ACCOUNT_NOT_LINKED])
    sync, _ = sync_request(
        connection=provider_account.connection, provider_account=provider_account
    )
    return sync


def retry_countdown(attempt: int) -> float:
    """Exponential backoff for failed syncs: base, 2*base, 4*base... capped at 1 hour."""
    return float(min(3600, settings.SYNC_RETRY_BACKOFF * 2**attempt))


def sync_retry_schedule(*, sync: Sync) -> Sync | None:
    """After a transient failure, a new Sync later (attempt+1), up to SYNC_MAX_RETRIES."""
    if sync.status != Sync.Status.FAILED or not sync.retryable:
        return None
    if sync.attempt >= settings.SYNC_MAX_RETRIES:
        return None
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None  # inline (tests): a retry would run at once, without its backoff
    retry, created = sync_request(
        connection=sync.connection,
        provider_account=sync.provider_account,
        attempt=sync.attempt + 1,
        countdown=max(retry_countdown(sync.attempt), float(sync.stats.get("retry_after") or 0)),
    )
    return retry if created else None


def syncs_enqueue_all() -> int:
    """The scheduled refresh: a sync for every connection that is not waiting for a new
    credential and has request budget left."""
    count = 0
    for connection in ProviderConnection.objects.exclude(
        status=ProviderConnection.Status.REQUIRES_UPDATE
    ):
        cls = adapter_class(connection.provider)
        if cls is None or not cls.budget_allows_scheduled_sync(connection):
            continue
        _, created = sync_request(connection=connection)
        count += int(created)
    return count


def syncs_settle(*, now: dt.datetime | None = None) -> int:
    """Mark syncs left `syncing` by a killed worker (no heartbeat for SYNC_STUCK_MINUTES and
    no live process holding the connection's runner lock), or
    `pending` that long without starting, as failed, so the next sync can run."""
    now = now or timezone.now()
    cutoff = now - dt.timedelta(minutes=settings.SYNC_STUCK_MINUTES)
    settled = 0
    for status, error in (
        (Sync.Status.SYNCING, STUCK_ERROR),
        (Sync.Status.PENDING, NEVER_STARTED_ERROR),
    ):
        stale = Sync.objects.filter(status=status, updated_at__lt=cutoff)
        if status == Sync.Status.SYNCING:
            # a runner alive in one long request (it holds the lock) is not stuck
            alive = [
                pk
                for pk, connection_id in stale.values_list("pk", "connection_id")
                if sync_runner_alive(connection_id)
            ]
            stale = stale.exclude(pk__in=alive)
        if status == Sync.Status.PENDING:
            # a retry waits its backoff (at most an hour) in `pending`: give it that on top
            retry_cutoff = cutoff - dt.timedelta(hours=1)
            stale = stale.filter(Q(attempt=0) | Q(updated_at__lt=retry_cutoff))
        count = stale.update(
            status=Sync.Status.FAILED, error=error, finished_at=now, updated_at=now, retryable=True
        )
        settled += count
    return settled
