"""A small model of the sync rules (docs/decisions.md, "Sync rules that never lose a posted
charge"), written from the rules and not from the code: what the ledger of a connection must
hold after each sync, given what upstream sent. tests/providers/test_sync_model.py runs it
against the service.

A model row is keyed like the service keys its rows: the upstream id, or for a row without one
its content and its occurrence among identical rows of the response. Rows are compared by
what the API shows, blank keys by occurrence alone ("blank:<n>")."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal

from tests.providers.upstream import Row

TAKEOVER_DAYS = 8
CENT = Decimal("0.01")

Key = tuple  # ("id", uid) or ("blank", content, occurrence)


def row_key(row: Row, seen: Counter) -> Key:
    if row.uid:
        return ("id", row.uid)
    content = (row.date, row.amount, row.name, row.merchant, row.pending, row.currency)
    key = ("blank", content, seen[content])
    seen[content] += 1
    return key


def key_text(key: Key) -> str:
    """The key as the service's external id reads, blank keys by occurrence only."""
    return key[1] if key[0] == "id" else f"blank:{key[2]}"


def key_order(key: Key) -> tuple:
    """The order of the service's external ids among rows that can compete: blank slot keys
    (`blank:...`) sort before the ids these tests use ("p-", "t-"), and by occurrence."""
    return (0, "", key[2]) if key[0] == "blank" else (1, key[1], 0)


@dataclass
class MRow:
    account: str
    key: Key
    date: dt.date
    amount: Decimal
    currency: str
    pending: bool
    name: str
    merchant: str | None
    created: int  # the sync that wrote it
    # what the last upstream snapshot said (a household's edit is a difference from it)
    up_name: str = ""
    up_merchant: str | None = None
    up_notes: str | None = None
    notes: str | None = None
    category: str | None = None
    tags: set[str] = field(default_factory=set)
    excluded: bool = False
    by_sync: bool = False
    settled: bool = False

    def view(self) -> tuple:
        return (
            self.account,
            key_text(self.key),
            self.date.isoformat(),
            str(self.amount.quantize(CENT)),
            self.pending,
            self.excluded,
            self.name,
            self.merchant,
            self.notes,
            self.category,
            tuple(sorted(self.tags)),
        )


@dataclass
class Model:
    today: dt.date
    history_days: int
    overlap_days: int
    stale_days: int
    rows: dict[tuple[str, Key], MRow] = field(default_factory=dict)
    completed: bool = False  # a sync of the connection has completed
    syncs: int = 0
    events: Counter = field(default_factory=Counter)  # what the rules did, for coverage

    def window(self) -> tuple[dt.date, dt.date]:
        """From the history (first sync) or the overlap, back to the earliest row still
        pending and counted in the ledger; to today."""
        days = self.overlap_days if self.completed else self.history_days
        start = self.today - dt.timedelta(days=days)
        pending = [r.date for r in self.rows.values() if r.pending and not r.excluded]
        return (min([start, *pending]), self.today)

    def sync(
        self, upstream: dict[str, list[Row]], *, omit_pending: bool, failed: set[str] | None
    ) -> None:
        """One sync. `failed`: the accounts whose fetch fails (None: the whole sync)."""
        self.syncs += 1
        if failed is None:
            return
        start, end = self.window()
        for account, rows in upstream.items():
            if account in failed:
                continue
            sent = [r for r in rows if start <= r.date <= end and not (r.pending and omit_pending)]
            self._apply(account, sent, (start, end))
        if not failed:
            self.completed = True

    def _apply(self, account: str, sent: list[Row], window: tuple[dt.date, dt.date]) -> None:
        seen: Counter = Counter()
        keyed: dict[Key, Row] = {}
        for row in sent:
            keyed[row_key(row, seen)] = row
        for key, row in keyed.items():
            stored = self.rows.get((account, key))
            if stored is None:
                self.rows[(account, key)] = MRow(
                    account,
                    key,
                    row.date,
                    row.amount,
                    row.currency,
                    row.pending,
                    row.name or "Transaction",
                    row.merchant,
                    self.syncs,
                    up_name=row.name or "Transaction",
                    up_merchant=row.merchant,
                )
                continue
            if stored.by_sync:  # upstream sends it again: it counts again
                stored.excluded = stored.by_sync = False
                self.events["included again"] += 1
            changed = (row.date, row.amount, row.currency, row.pending, row.name, row.merchant)
            if changed != (
                stored.date,
                stored.amount,
                stored.currency,
                stored.pending,
                stored.up_name,
                stored.up_merchant,
            ):
                if stored.pending and not row.pending:
                    stored.settled = True
                if stored.name == stored.up_name:
                    stored.name = row.name or "Transaction"
                if stored.merchant == stored.up_merchant:
                    stored.merchant = row.merchant
                stored.up_name, stored.up_merchant = row.name or "Transaction", row.merchant
                stored.date, stored.amount, stored.pending = row.date, row.amount, row.pending
                stored.currency = row.currency
        self._settle(account, set(keyed), window)

    def _settle(self, account: str, listed: set[Key], window: tuple[dt.date, dt.date]) -> None:
        mine = [r for r in self.rows.values() if r.account == account]
        vanished = sorted(
            (
                r
                for r in mine
                if r.pending
                and r.key not in listed
                and (r.by_sync or window[0] <= r.date <= window[1])
            ),
            key=lambda r: (r.date, r.created, key_order(r.key)),
        )
        posted = [r for r in mine if not r.pending and not r.settled]
        stale_before = self.today - dt.timedelta(days=self.stale_days)
        for old in vanished:
            versions = [
                p
                for p in posted
                if p.amount == old.amount
                and p.currency == old.currency
                and abs((p.date - old.date).days) <= TAKEOVER_DAYS
            ]
            if versions:
                new = min(
                    versions,
                    key=lambda p: (
                        abs((p.date - old.date).days),
                        p.date,
                        p.created,
                        key_order(p.key),
                    ),
                )
                posted.remove(new)
                self._take_over(old, new)
            elif not old.excluded and old.date < stale_before:
                old.excluded = old.by_sync = True
                self.events["excluded by the sync"] += 1

    def _take_over(self, old: MRow, new: MRow) -> None:
        """The posted row receives the household's edits; the pending row goes."""
        if old.by_sync:
            self.events["taken over after the exclusion"] += 1
        elif new.created < self.syncs:
            self.events["taken over by an earlier posted row"] += 1
        else:
            self.events["taken over in the same sync"] += 1
        if old.key[0] == "blank":
            self.events["blank row taken over"] += 1
        if old.category is not None:
            new.category = old.category
        if old.notes != old.up_notes:
            new.notes = old.notes
        if old.name != old.up_name:
            new.name = old.name
        if old.merchant != old.up_merchant:
            new.merchant = old.merchant
        if old.excluded and not old.by_sync:
            new.excluded, new.by_sync = True, False
        new.tags |= old.tags
        new.settled = True
        del self.rows[(old.account, old.key)]

    def view(self) -> list[tuple]:
        return sorted((r.view() for r in self.rows.values()), key=repr)
