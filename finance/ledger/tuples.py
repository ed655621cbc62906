"""The writes of a ledger batch whose rows come as tuples (a sync's new rows, an import's
publish, a restore) or staged in the database (an import's rows, by one INSERT ... SELECT):
no model instance per row. The household's rules run over tuples in Python; the rows they
leave as they were can still go by the one statement (`write_decided`)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import QuerySet

from finance.ledger.db.fastinsert import fast_insert, insert_select
from finance.ledger.rules import BatchRules
from finance.models import Transaction


class TupleWrites:
    """Mixed into `LedgerBatch` (finance/ledger/batch.py), which provides `rules`,
    `inserted`, `touch` and `_touch_rows`."""

    rules: BatchRules
    inserted: int

    def touch(  # pragma: no cover - LedgerBatch's
        self, family: Any, account_id: uuid.UUID, date: dt.date | None
    ) -> None:
        raise NotImplementedError

    def _touch_rows(self, queryset: QuerySet[Transaction]) -> None:  # pragma: no cover
        raise NotImplementedError

    def write_values(
        self,
        names: Sequence[str],
        rows: list[tuple],
        *,
        tag_links: Iterable[tuple[uuid.UUID, uuid.UUID]] = (),
        rules: bool = True,
    ) -> None:
        """Insert rows given as tuples in the order of `names` (field names, `id`, `family`,
        `account` and `date` among them), and (transaction id, tag id) links: an import's
        publish, a sync's new rows (whose keys the caller has checked are new). The
        household's rules run over them first (`rules=False`: not; a restore writes rows as
        they were)."""
        links = list(tag_links)
        groups: list[tuple[Sequence[str], list[tuple]]] = [(names, rows)]
        if rules and rows:
            groups, links = self.rules.apply_to_values(names, rows, links)
        for group_names, group_rows in groups:
            self.inserted += fast_insert(Transaction, group_names, group_rows)
        if links:
            fast_insert(Transaction.tags.through, ("transaction", "tag"), links)
        family_at, account_at, date_at = (names.index(n) for n in ("family", "account", "date"))
        firsts: dict[tuple[uuid.UUID, uuid.UUID], dt.date] = {}
        for row in rows:
            key = (row[family_at], row[account_at])
            if key not in firsts or row[date_at] < firsts[key]:
                firsts[key] = row[date_at]
        for (family_id, account_id), first in firsts.items():
            self.touch(family_id, account_id, first)

    def write_decided(
        self,
        names: Sequence[str],
        rows: list[tuple],
        *,
        tag_links: Iterable[tuple[uuid.UUID, uuid.UUID]] = (),
    ) -> list[tuple]:
        """Run the household's rules over rows given as tuples (as `write_values`) and write
        those the rules changed or that have tag links; return the others, untouched and
        unwritten, for the caller to write by one statement (`write_select`): an import's rows,
        staged in the database, mostly pass no rule."""
        if not rows:
            return []
        groups, links = self.rules.apply_to_values(names, rows, list(tag_links))
        linked = {txn_id for txn_id, _tag in links}
        id_at = names.index("id")
        (kept_names, kept), *changed = groups
        left = [row for row in kept if row[id_at] not in linked]
        if len(left) < len(kept):
            changed.insert(0, (kept_names, [row for row in kept if row[id_at] in linked]))
        last = len(changed) - 1
        for i, (group_names, group_rows) in enumerate(changed):
            links_now = links if i == last else ()  # once every row is in
            self.write_values(group_names, group_rows, tag_links=links_now, rules=False)
        return left

    def write_select(
        self,
        names: Sequence[str],
        select_sql: str,
        params: Sequence[Any],
        *,
        written: QuerySet[Transaction],
        about: int | None = None,
    ) -> int:
        """Insert the rows of one SELECT (columns in the order of `names`) with one statement:
        rows staged in the database, an import's, published without passing through Python.
        `written`: the rows once inserted (their accounts' first dates are derived from);
        `about`: about how many the SELECT gives, where known.
        The household's rules do not run here: a caller whose household has rules
        (`has_rules`) passes its rows through `write_decided` first and leaves out of the
        SELECT those it wrote."""
        count = insert_select(Transaction, names, select_sql, params, about=about)
        self.inserted += count
        if count:
            self._touch_rows(written)
        return count

    def has_rules(self, family_id: uuid.UUID) -> bool:
        return self.rules.of(family_id) is not None
