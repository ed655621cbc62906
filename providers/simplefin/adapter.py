"""SimpleFIN as a ProviderAdapter (see providers.base).

One `GET /accounts` answers every account at once, so the adapter reads the whole sync window
(cut into windows of at most 60 days) during `list_accounts()` and serves `balance()`,
`transactions()` and `holdings()` from that read: a sync costs one request per window, not one
per account. Balances are the newest window's. The connection's daily request budget
(SIMPLEFIN_DAILY_REQUEST_LIMIT, counted by the engine in request_day/daily_request_count) is
checked before a sync and by the scheduler."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.conf import settings
from django.utils import timezone

from core.errors import ValidationFailed
from providers.base import ProviderAdapter, pending_since, register_adapter
from providers.http import ProviderHttp
from providers.simplefin.client import SimplefinClient, claim_setup_token
from providers.simplefin.parsing import SimplefinAccount
from providers.simplefin.windows import (
    MAX_WINDOW_DAYS,
    budget_exhausted_message,
    request_budget,
    sync_windows,
)
from providers.types import (
    CredentialFields,
    HoldingsNotSupported,
    ProviderError,
    UpstreamAccount,
    UpstreamBalance,
    UpstreamHolding,
    UpstreamTransaction,
)

logger = logging.getLogger(__name__)

SETUP_TOKEN_REQUIRED = "setup_token: is required for the simplefin provider"
MSG_ACCOUNT_GONE = "SimpleFIN did not return this account in the last response."


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC)


def _budget(connection: Any, now: dt.datetime):
    day = getattr(connection, "request_day", None)
    return request_budget(
        window_started_at=_midnight(day) if day else None,
        used=getattr(connection, "daily_request_count", 0) or 0,
        now=now,
    )


def _first_day(end: dt.date, windows: int) -> dt.date:
    """The earliest day `windows` requests reach, reading back from `end` (inclusive)."""
    days = windows * MAX_WINDOW_DAYS
    if days > (end - dt.date.min).days:
        return dt.date.min
    return end + dt.timedelta(days=1) - dt.timedelta(days=days)


@register_adapter
class SimplefinAdapter(ProviderAdapter):
    provider = "simplefin"
    label = "SimpleFIN"
    supports_holdings = True

    def __init__(self, *, secret: str, http: ProviderHttp, connection: Any = None) -> None:
        super().__init__(secret=secret, http=http, connection=connection)
        self.history_days = settings.SIMPLEFIN_HISTORY_DAYS
        self.client = SimplefinClient(secret, http=http)
        self._accounts: dict[str, SimplefinAccount] = {}
        self._unreadable: dict[str, str] = {}  # upstream id -> why it was left out
        self._window: tuple[dt.date, dt.date] | None = None
        self._messages: list[str] = []

    def __repr__(self) -> str:
        return f"SimplefinAdapter({self.client.base_url!r})"

    # --- connection time -----------------------------------------------------------------
    @classmethod
    def credential_from_request(cls, data: CredentialFields, *, http: ProviderHttp) -> str:
        token = data.get("setup_token")
        if not isinstance(token, str) or not token.strip():
            raise ValidationFailed([SETUP_TOKEN_REQUIRED])
        # InvalidSetupToken (malformed, used, expired) is a ProviderError: the API makes it 422.
        # The claim is not counted in the budget: that is per access URL, which has none yet.
        access_url = claim_setup_token(token, http=http)
        try:
            versions = SimplefinClient(access_url, http=http).info()
            logger.info("SimpleFIN server speaks protocol versions %s", ", ".join(versions))
        except ProviderError as exc:
            if exc.requires_update or exc.permanent:
                raise
            logger.warning("SimpleFIN /info could not be read: %s", exc.user_message)
        return access_url

    # --- budget ------------------------------------------------------------------------------
    def _requests_needed(self, connection: Any, today: dt.date) -> int:
        start, end = self.sync_window(connection=connection, today=today)
        return max(len(sync_windows(_midnight(start), _midnight(end + dt.timedelta(days=1)))), 1)

    def check_budget(self, connection: Any) -> None:
        now = timezone.now()
        budget = _budget(connection, now)
        needed = self._requests_needed(connection, now.date())
        if not budget.allows(needed):
            raise ProviderError(
                budget_exhausted_message(budget, now=now, needed=needed),
                retry_after=budget.seconds_until_reset(now=now),
            )
        # Retries spend the budget too: the seam sends nothing past it.
        self.http.limit_requests(
            budget.remaining,
            message=budget_exhausted_message(budget.spend(budget.remaining, now=now), now=now),
            retry_after=budget.seconds_until_reset(now=now),
        )

    @classmethod
    def budget_allows_scheduled_sync(cls, connection: Any) -> bool:
        return _budget(connection, timezone.now()).allows(1)

    # --- reading ---------------------------------------------------------------------------------
    def sync_window(self, *, connection: Any, today: dt.date) -> tuple[dt.date, dt.date]:
        if connection is None:
            return today, today
        start, end = self.overlap_window(connection=connection, today=today)
        # A window one day's budget can never cover (SIMPLEFIN_HISTORY_DAYS far above
        # 60 x SIMPLEFIN_DAILY_REQUEST_LIMIT) is cut to the most recent days that fit.
        start = max(start, _first_day(end, settings.SIMPLEFIN_DAILY_REQUEST_LIMIT))
        pending = pending_since(connection, self.provider)
        if pending is not None and pending < start:
            # Back to the oldest row still pending in the ledger, by more requests: at most half
            # of what today's budget has left (the rest stays for retries and later syncs); a
            # pending row the window cannot reach is not judged.
            needed = len(sync_windows(_midnight(start), _midnight(end + dt.timedelta(days=1))))
            allowed = max(_budget(connection, timezone.now()).remaining // 2, needed)
            start = max(pending, _first_day(end, allowed))
        return start, end

    def list_accounts(self) -> list[UpstreamAccount]:
        if self.connection is None:  # discovery at connection time: one balances-only request
            result = self.client.accounts(balances_only=True)
            self._messages = result.errors
            self._accounts = result.by_id()
            return [a.account for a in result.accounts]
        today = timezone.now().date()
        start, end = self.sync_window(connection=self.connection, today=today)
        self._read(start, end)
        return [a.account for a in self._accounts.values()] + self._known_unreadable()

    def _known_unreadable(self) -> list[UpstreamAccount]:
        """Known accounts SimpleFIN sent unreadably this time, as stored: the engine syncs
        them, `balance()` fails, and the sync names them as failed instead of completing."""
        if not self._unreadable:
            return []
        stored = self.connection.accounts.filter(upstream_id__in=list(self._unreadable))
        return [
            UpstreamAccount(
                upstream_id=pa.upstream_id,
                name=pa.name,
                currency=pa.currency,
                account_type=pa.account_type,
                institution_name=pa.institution_name,
                raw=pa.raw,
            )
            for pa in stored
        ]

    def _read(self, start: dt.date, end: dt.date) -> None:
        """Every window of [start, end] (dates inclusive), oldest first; the newest window
        gives balances and holdings. Any failure fails the read: never a partial list."""
        windows = sync_windows(_midnight(start), _midnight(end + dt.timedelta(days=1)))
        accounts: dict[str, SimplefinAccount] = {}
        unreadable: dict[str, str] = {}
        messages: list[str] = []
        for lower, upper in windows:
            result = self.client.accounts(start=lower, end=upper)
            messages.extend(result.errors)
            unreadable.update(result.unreadable)
            for upstream_id, item in result.by_id().items():
                earlier = accounts.get(upstream_id)
                if earlier is not None:
                    item.transactions = _merge(earlier.transactions, item.transactions)
                accounts[upstream_id] = item
        # an account unreadable in any window would miss that window's rows: not synced
        self._accounts = {k: v for k, v in accounts.items() if k not in unreadable}
        self._unreadable = unreadable
        self._window = (start, end)
        self._messages = list(dict.fromkeys(messages))

    def _account(self, upstream_id: str) -> SimplefinAccount:
        if upstream_id in self._unreadable:
            raise ProviderError(self._unreadable[upstream_id])
        item = self._accounts.get(upstream_id)
        if item is None:
            raise ProviderError(MSG_ACCOUNT_GONE)
        return item

    def balance(self, upstream_id: str) -> UpstreamBalance:
        return self._account(upstream_id).balance

    def transactions(
        self, upstream_id: str, start: dt.date, end: dt.date
    ) -> list[UpstreamTransaction]:
        if self._window is None or self._window[0] > start or self._window[1] < end:
            self._read(start, end)
        return list(self._account(upstream_id).transactions)

    def holdings(self, upstream_id: str) -> list[UpstreamHolding]:
        item = self._account(upstream_id)
        if not item.holdings_present:
            # Holdings are not in the protocol; the engine stops asking for this account.
            raise HoldingsNotSupported("SimpleFIN sends no holdings for this account.")
        return item.holdings

    def messages(self) -> list[str]:
        return list(self._messages)


def _merge(
    older: list[UpstreamTransaction], newer: list[UpstreamTransaction]
) -> list[UpstreamTransaction]:
    """Rows of two windows; a row with an id seen in both keeps its newest copy (a pending
    row reported again in the later window). Rows without an id are all kept."""
    by_id = {t.upstream_id: i for i, t in enumerate(older) if t.upstream_id}
    merged = list(older)
    for row in newer:
        if row.upstream_id and row.upstream_id in by_id:
            merged[by_id[row.upstream_id]] = row
        else:
            merged.append(row)
    return merged
