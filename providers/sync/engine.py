"""Run one Sync: discovery, then per provider account fetch everything, then write it in one
ledger batch (one database transaction, balances and pairs derived inside it). A failed
account leaves its ledger exactly as it was; the other
accounts still sync. Outcome (docs/decisions.md, Providers):

- every account synced -> `completed`, connection `good`, `last_synced_at` set;
- some accounts failed -> `failed`, `error` names them, `stats.failed_accounts` lists them
  (id, name, error); the accounts that did sync keep their new data;
- discovery or the credential failed -> `failed` with the provider's reason; 401/403 set the
  connection to `requires_update`, anything else to `error`.

Only the process holding the connection's runner lock (providers/sync/lock.py) runs a sync, and
only a Sync row it moves pending -> syncing in one conditional UPDATE; the partial unique
constraint `one_active_sync_per_connection` allows one pending or syncing Sync per connection:
two syncs of one connection never run at once (PostgreSQL and SQLite alike). A Sync found
`syncing` with the lock free lost its runner (a killed worker): the redelivered task takes it
over and runs it again from the start (every write is keyed by upstream id, so nothing doubles).
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from typing import Any

from django.db.models import F
from django.utils import timezone

from finance.ledger import LedgerBatch, PairsLater, ledger_batch
from finance.models import Account
from providers.base import ProviderAdapter, adapter_class, adapter_for
from providers.http import ProviderHttp
from providers.models import ProviderAccount, ProviderConnection, Sync
from providers.sync.apply import transactions_apply
from providers.sync.fetch import AccountData, FetchAhead, account_fetch, ledger_currency
from providers.sync.lock import sync_runner_lock
from providers.types import (
    ProviderError,
    UpstreamAccount,
    UpstreamHolding,
)

logger = logging.getLogger("providers.sync")

STAT_KEYS = (
    "accounts_seen",
    "transactions_added",
    "transactions_updated",
    "transactions_unchanged",
    "transactions_pending",
    "transactions_removed",
    "requests_made",
)
INTERNAL_ERROR = "an internal error stopped this account's sync (logged)"
ACCOUNT_TYPES = set(Account.Type.values)


def empty_stats() -> dict[str, Any]:
    return {**dict.fromkeys(STAT_KEYS, 0), "failed_accounts": []}


def provider_accounts_upsert(
    *, connection: ProviderConnection, upstream: list[UpstreamAccount]
) -> list[ProviderAccount]:
    """Discovery: one ProviderAccount per upstream id (never matched by name)."""
    stored = {pa.upstream_id: pa for pa in connection.accounts.select_related("account")}
    result = []
    for item in upstream:
        pa = stored.get(item.upstream_id)
        values = {
            "name": item.name[:255],
            "currency": (item.currency or connection.family.currency)[:3],
            "account_type": item.account_type,
            "institution_name": item.institution_name[:255],
            "raw": item.raw,
        }
        if pa is None:
            pa = ProviderAccount.objects.create(
                connection=connection, upstream_id=item.upstream_id, **values
            )
        elif any(getattr(pa, k) != v for k, v in values.items()):
            for k, v in values.items():
                setattr(pa, k, v)
            pa.save()
        result.append(pa)
    return result


def budget_add(connection: ProviderConnection, count: int) -> None:
    if not count:
        return
    today = timezone.now().date()
    ProviderConnection.objects.filter(pk=connection.pk, request_day=today).update(
        daily_request_count=F("daily_request_count") + count
    ) or ProviderConnection.objects.filter(pk=connection.pk).exclude(request_day=today).update(
        request_day=today, daily_request_count=count
    )


def _sync_claim(sync_id: uuid.UUID) -> tuple[Sync | None, bool]:
    """Pending -> syncing; else syncing -> syncing (a takeover: the caller holds the runner
    lock, so whoever marked it syncing is gone). Returns the claimed Sync (None: nothing to
    run) and whether it was such a takeover."""
    now = timezone.now()
    values = {"status": Sync.Status.SYNCING, "started_at": now, "updated_at": now}
    claimed = Sync.objects.filter(pk=sync_id, status=Sync.Status.PENDING).update(**values)
    taken_over = not claimed and bool(
        Sync.objects.filter(pk=sync_id, status=Sync.Status.SYNCING).update(**values)
    )
    if not (claimed or taken_over):
        return None, False
    sync = Sync.objects.select_related("connection__family", "provider_account").get(pk=sync_id)
    return sync, taken_over


def _ledger_account_for(pa: ProviderAccount, *, has_holdings: bool = False) -> Account:
    """The linked ledger account, or a new one at the first sync (decisions.md): the upstream
    type, else `investment` when the provider reports holdings, else `depository`."""
    if pa.account_id:
        return pa.account
    family = pa.connection.family
    if pa.account_type in ACCOUNT_TYPES:
        account_type = pa.account_type
    else:
        account_type = "investment" if has_holdings else "depository"
    account = Account.objects.create(
        family=family,
        name=pa.name,
        currency=ledger_currency(pa),
        account_type=account_type,
        institution_name=pa.institution_name,
    )
    pa.account = account
    pa.save(update_fields=["account", "updated_at"])
    return account


def _holdings_apply(
    batch: LedgerBatch, account: Account, holdings: list[UpstreamHolding], as_of: dt.date
) -> None:
    """Replace the account's holdings with the provider's, and record the prices it reported
    as the household's price points of `as_of` through the sync's batch."""
    from trades.services import holdings_replace_from_provider, provider_prices_record

    replaced = holdings_replace_from_provider(account=account, holdings=holdings, as_of=as_of)
    provider_prices_record(batch, account=account, prices=replaced.prices, as_of=as_of)


def account_sync(
    *,
    adapter: ProviderAdapter,
    pa: ProviderAccount,
    start: dt.date,
    end: dt.date,
    today: dt.date,
    stats: dict[str, Any],
    pairs_later: PairsLater | None = None,
    fetched: AccountData | None = None,
) -> None:
    """Fetch everything for one account first (`fetched`: already read, providers/sync/
    fetch.py), then write it in one ledger batch (the rows, the reported balance and
    everything derived from them, or nothing). `pairs_later`: its transfer matching is left
    to the caller's one pass over every account it syncs."""
    data = fetched or account_fetch(adapter, pa, start, end)
    balance, rows, holdings = data.balance, data.rows, data.holdings
    holdings_supported = data.holdings_supported
    with ledger_batch(family=pa.connection.family, pairs_later=pairs_later) as batch:
        account = _ledger_account_for(pa, has_holdings=bool(holdings))
        result = transactions_apply(
            batch=batch,
            account=account,
            source=adapter.provider,
            rows=rows,
            today=today,
            window=(start, end),
            prepared=data.prepared,
        )
        balance_changed = batch.reported_balance(account, balance.amount, balance.as_of)
        if holdings is not None:
            _holdings_apply(batch, account, holdings, today)
            if not balance_changed:
                batch.touch(account.family_id, account.pk, today)
        if holdings_supported != pa.holdings_supported:
            pa.holdings_supported = holdings_supported
            pa.save(update_fields=["holdings_supported", "updated_at"])
    stats["transactions_added"] += result.added
    stats["transactions_updated"] += result.updated
    stats["transactions_unchanged"] += result.unchanged
    stats["transactions_pending"] += result.pending
    stats["transactions_removed"] += result.removed
    for note in result.notes:
        logger.warning("provider account %s: %s", pa.pk, note)


def _note_retry_after(stats: dict[str, Any], exc: ProviderError) -> None:
    """Keep the longest wait a provider asked for; the retry is not scheduled before it."""
    if exc.retry_after:
        stats["retry_after"] = max(stats.get("retry_after", 0), exc.retry_after)


def _finish(
    sync: Sync,
    *,
    status: str,
    error: str | None,
    retryable: bool,
    stats: dict[str, Any],
    connection_status: str,
    connection_error: str | None,
) -> Sync:
    now = timezone.now()
    sync.status, sync.error, sync.retryable, sync.stats = status, error, retryable, stats
    sync.finished_at = now
    # update(), not save(): the connection (and this row) may have been deleted meanwhile
    Sync.objects.filter(pk=sync.pk).update(
        status=status,
        error=error,
        retryable=retryable,
        stats=stats,
        finished_at=now,
        updated_at=now,
    )
    updates: dict[str, Any] = {"status": connection_status, "error": connection_error}
    if status == Sync.Status.COMPLETED:
        updates["last_synced_at"] = now
    ProviderConnection.objects.filter(pk=sync.connection_id).update(**updates, updated_at=now)
    return sync


def sync_run(*, sync_id: uuid.UUID, http: ProviderHttp | None = None) -> Sync:
    """Run a pending Sync (or one whose runner died) to its end. A Sync that already ran, or
    whose connection is being synced by a live process, is returned untouched."""
    connection_id = Sync.objects.filter(pk=sync_id).values_list("connection_id", flat=True).first()
    if connection_id is None:
        return Sync.objects.get(pk=sync_id)  # DoesNotExist, as before
    with sync_runner_lock(connection_id) as held:
        sync, orphaned = _sync_claim(sync_id) if held else (None, False)
        if sync is None:
            return Sync.objects.get(pk=sync_id)
        if orphaned:
            logger.warning("sync %s: its runner was lost; running it again", sync.pk)
        return _sync_run_claimed(sync, http, orphaned=orphaned)


def _failed(stats: dict[str, Any], pa: ProviderAccount, error: str) -> None:
    stats["failed_accounts"].append(
        {"provider_account_id": str(pa.pk), "name": pa.name, "error": error}
    )


def _sync_accounts(
    sync: Sync,
    *,
    adapter: ProviderAdapter,
    targets: list[ProviderAccount],
    window: tuple[dt.date, dt.date],
    today: dt.date,
    stats: dict[str, Any],
    orphaned: bool,
) -> bool:
    """Sync each account in its own ledger batch, then pair transfers once over all of them
    (finance/ledger/after.py, `PairsLater`), also when an account fails or the connection
    stops the run: the accounts written by then are paired. A run taking over from a lost
    runner pairs its accounts over the whole window, since rows that runner wrote before it
    died come back unchanged and would otherwise never be matched. Returns whether every
    failure was transient."""
    later = PairsLater()
    if orphaned:
        family = sync.connection.family
        for pa in targets:
            if pa.account_id:
                later.add(family, {pa.account_id: window[0]})
    transient = True
    try:
        # Each account is read while the one before it is written (providers/sync/fetch.py).
        with FetchAhead(adapter, targets, window) as ahead:
            for index, pa in enumerate(targets):
                try:
                    account_sync(
                        adapter=adapter,
                        pa=pa,
                        start=window[0],
                        end=window[1],
                        today=today,
                        stats=stats,
                        pairs_later=later,
                        fetched=ahead.take(index),
                    )
                except ProviderError as exc:
                    if exc.requires_update:
                        raise
                    transient = transient and not exc.permanent
                    _note_retry_after(stats, exc)
                    _failed(stats, pa, exc.user_message)
                except Exception:
                    logger.exception("sync %s: account %s failed", sync.pk, pa.pk)
                    transient = False
                    _failed(stats, pa, INTERNAL_ERROR)
                Sync.objects.filter(pk=sync.pk).update(updated_at=timezone.now())  # heartbeat
    finally:
        later.match()
    return transient


def _sync_run_claimed(sync: Sync, http: ProviderHttp | None, *, orphaned: bool = False) -> Sync:
    connection = sync.connection
    stats = empty_stats()
    cls = adapter_class(connection.provider)
    http = http or ProviderHttp(label=cls.label if cls else connection.provider)
    today = timezone.now().date()
    try:
        adapter = adapter_for(connection, http=http)
        adapter.check_budget(connection)
        upstream = adapter.list_accounts()
        provider_accounts = provider_accounts_upsert(connection=connection, upstream=upstream)
        start, end = adapter.sync_window(connection=connection, today=today)
        sync.window_start, sync.window_end = start, end
        sync.save(update_fields=["window_start", "window_end", "updated_at"])
        targets = [pa for pa in provider_accounts if not pa.skipped]
        if sync.provider_account_id:
            targets = [pa for pa in targets if pa.pk == sync.provider_account_id]
            if not targets:
                raise ProviderError(
                    "The provider no longer lists this account, or it is skipped.",
                    permanent=True,
                )
        stats["accounts_seen"] = len(upstream)
        transient = _sync_accounts(
            sync,
            adapter=adapter,
            targets=targets,
            window=(start, end),
            today=today,
            stats=stats,
            orphaned=orphaned,
        )
    except ProviderError as exc:
        _note_retry_after(stats, exc)
        stats["requests_made"] = http.requests_made
        budget_add(connection, http.requests_made)
        status = (
            ProviderConnection.Status.REQUIRES_UPDATE
            if exc.requires_update
            else ProviderConnection.Status.ERROR
        )
        return _finish(
            sync,
            status=Sync.Status.FAILED,
            error=exc.user_message,
            retryable=not exc.permanent,
            stats=stats,
            connection_status=status,
            connection_error=exc.user_message,
        )
    except Exception:
        logger.exception("sync %s failed", sync.pk)
        stats["requests_made"] = http.requests_made
        return _finish(
            sync,
            status=Sync.Status.FAILED,
            error="An internal error stopped the sync; it has been logged.",
            retryable=False,
            stats=stats,
            connection_status=ProviderConnection.Status.ERROR,
            connection_error="An internal error stopped the last sync.",
        )
    stats["requests_made"] = http.requests_made
    budget_add(connection, http.requests_made)
    notices = "; ".join(adapter.messages()) or None
    failed = stats["failed_accounts"]
    if failed:
        error = f"{len(failed)} of {len(targets)} accounts failed to sync: " + "; ".join(
            f"{item['name']}: {item['error']}" for item in failed
        )
        return _finish(
            sync,
            status=Sync.Status.FAILED,
            error=error,
            retryable=transient,
            stats=stats,
            connection_status=ProviderConnection.Status.ERROR,
            connection_error=error,
        )
    return _finish(
        sync,
        status=Sync.Status.COMPLETED,
        error=None,
        retryable=False,
        stats=stats,
        connection_status=ProviderConnection.Status.GOOD,
        connection_error=notices,
    )
