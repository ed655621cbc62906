"""What a sync reads from the provider for one account, and reading it one account ahead.

A sync writes each account in its own ledger batch once everything for it has been read
(providers/sync/engine.py). Read in turn, a sync of twenty accounts waited for the provider
and for the database one after the other. `FetchAhead` reads the next account in one worker
thread while the caller writes the current one: the requests go out in the same order, one at
a time, and never after a refused credential (a `requires_update` error starts no further
read). The worker touches no database (a stray query would open its own connection there: it
is closed when each read ends)."""

from __future__ import annotations

import datetime as dt
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ObjectDoesNotExist
from django.db import connections

from providers.sync.apply import Prepared, rows_prepare
from providers.types import (
    HoldingsNotSupported,
    ProviderError,
    UpstreamBalance,
    UpstreamHolding,
    UpstreamTransaction,
)

if TYPE_CHECKING:
    from providers.base import ProviderAdapter
    from providers.models import ProviderAccount


@dataclass
class AccountData:
    """One account as the provider reported it."""

    balance: UpstreamBalance
    rows: list[UpstreamTransaction]
    holdings: list[UpstreamHolding] | None  # None: not asked for, or not supported
    holdings_supported: bool | None
    prepared: Prepared | None = None  # the rows keyed and digested, when a currency was given


def account_fetch(
    adapter: ProviderAdapter,
    pa: ProviderAccount,
    start: dt.date,
    end: dt.date,
    currency: str | None = None,
) -> AccountData:
    """Read the account's balance, its rows of [start, end] and (where the provider has
    them and the account has not said otherwise) its holdings; with `currency` (the ledger
    account's), the rows are also prepared for the write (`rows_prepare`)."""
    balance = adapter.balance(pa.upstream_id)
    rows = adapter.transactions(pa.upstream_id, start, end)
    holdings: list[UpstreamHolding] | None = None
    supported = pa.holdings_supported
    if adapter.supports_holdings and pa.holdings_supported is not False:
        try:
            holdings = adapter.holdings(pa.upstream_id)
            supported = True
        except HoldingsNotSupported:
            supported = False
    prepared = rows_prepare(rows, currency) if currency else None
    return AccountData(balance, rows, holdings, supported, prepared)


def _fetch_in_worker(*args: Any) -> AccountData:
    try:
        return account_fetch(*args)
    finally:
        connections.close_all()  # this thread's own, if anything opened one


def ledger_currency(pa: ProviderAccount) -> str | None:
    """The currency of the ledger account `pa` writes to: its linked account's, else the one
    the account its first sync creates gets (the provider's, else the household's; engine.py
    `_ledger_account_for`); None when its account went meanwhile (nothing is prepared
    ahead: its own write finds out)."""
    try:
        if pa.account_id:
            return pa.account.currency
        return pa.currency or pa.connection.family.currency
    except ObjectDoesNotExist:
        return None


class FetchAhead:
    """with FetchAhead(adapter, targets, (start, end)) as ahead:
    for i, pa in enumerate(targets): data = ahead.take(i)  # raises what reading raised"""

    def __init__(
        self,
        adapter: ProviderAdapter,
        targets: list[ProviderAccount],
        window: tuple[dt.date, dt.date],
    ) -> None:
        self._adapter, self._targets, self._window = adapter, targets, window
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[int, Future[AccountData]] = {}

    def __enter__(self) -> FetchAhead:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sync-fetch")
        self._submit(0)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._pool is not None
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, index: int) -> None:
        if self._pool is not None and index < len(self._targets):
            pa = self._targets[index]
            self._futures[index] = self._pool.submit(
                _fetch_in_worker, self._adapter, pa, *self._window, ledger_currency(pa)
            )

    def take(self, index: int) -> AccountData:
        """Account `index`'s data (taken in order: 0, 1, ...), waiting for its read; the next
        account's read starts, unless this one found the key refused."""
        future = self._futures.pop(index)
        failure = future.exception()  # waits for the read
        if not (isinstance(failure, ProviderError) and failure.requires_update):
            self._submit(index + 1)
        return future.result()  # raises what the read raised
