"""Writing an archive's records into an empty household (docs/decisions.md "Export and
restore"): every record gets a new id and every reference is rebuilt onto the new ids.

The new id of a record is derived from its archived id and the restore's own id (a name-based
UUID under a namespace drawn per restore): a reference is rebuilt by computing, never by
looking up a table of a million ids held in memory, and two restores of one archive never share
an id. Transactions go in through the ledger batch (`write_values`, the household's rules not
applied: rows come back as they were), transfers and rejected pairs are written explicitly
before the batch closes, so its transfer matching finds their legs taken."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from core.errors import Conflict
from exports.reader import Archive
from exports.restore_investments import InvestmentsAndConnections
from exports.restore_values import day, dec, instant, ref
from finance.ledger import ROW_FIELDS, LedgerBatch, fast_insert
from finance.models import (
    Account,
    Category,
    Family,
    Merchant,
    RejectedTransfer,
    Rule,
    Tag,
    Transaction,
    Transfer,
)
from trades.models import Security

CHUNK = 5000
NOT_EMPTY = "This household already has accounts: an archive is restored into an empty household."
TRANSACTION_FIELDS = (
    *ROW_FIELDS,
    "category",
    "merchant",
    "kind",
    "pending",
    "excluded",
    "excluded_by_sync",
    "pending_settled",
    "provider_snapshot",
    "rule_changes",
    "edited_fields",
    "created_at",
    "updated_at",
)
Progress = Callable[[str, int], None]


class Restorer(InvestmentsAndConnections):
    """One restore of `archive` into `family`, inside the caller's ledger batch."""

    def __init__(
        self,
        *,
        family: Family,
        archive: Archive,
        batch: LedgerBatch,
        namespace: uuid.UUID,
        progress: Progress | None = None,
    ) -> None:
        self.family, self.archive, self.batch = family, archive, batch
        self.namespace = namespace
        self.progress = progress
        self.known: set[str] = set()  # archived ids of accounts, categories, merchants, tags
        self.securities: dict[str, uuid.UUID] = {}  # archived id -> the id it maps to
        self.transfer_ids: set[uuid.UUID] = set()

    def new(self, old: str | None) -> uuid.UUID | None:
        return None if old is None else uuid.uuid5(self.namespace, str(old))

    def remap(self, value: Any) -> Any:
        """A rule's conditions and actions with every archived id in them replaced."""
        if isinstance(value, str):
            return str(self.new(value)) if value in self.known else value
        if isinstance(value, list):
            return [self.remap(v) for v in value]
        if isinstance(value, dict):
            return {k: self.remap(v) for k, v in value.items()}
        return value

    def _insert(self, kind: str, model: type, names: tuple[str, ...], build: Callable) -> int:
        rows, total = [], 0
        for line in self.archive.lines(kind):
            rows.append(build(line))
            if len(rows) >= CHUNK:
                total += fast_insert(model, names, rows)
                rows = []
                self._tick(kind, total)
        total += fast_insert(model, names, rows)
        self._tick(kind, total)
        return total

    def _tick(self, kind: str, done: int) -> None:
        if self.progress is not None:
            self.progress(kind, done)

    def _stamps(self, line: dict[str, Any]) -> tuple[dt.datetime | None, dt.datetime | None]:
        return instant(line["created_at"]), instant(line["updated_at"])

    # -- the kinds, references first ----------------------------------------------------------
    def run(self) -> None:
        if Account.objects.filter(family=self.family).exists():
            raise Conflict(NOT_EMPTY)
        self.accounts()
        self.labels()
        self.securities_()
        self.rules()
        self.transactions()
        self.pairs()
        self.trades()
        self.holdings_and_prices()
        self.exchange_rates()
        self.connections()

    def accounts(self) -> None:
        names = (
            "id", "family", "name", "account_type", "status", "currency", "institution_name",
            "opening_balance", "opening_balance_date", "reported_balance", "reported_balance_at",
            "created_at", "updated_at",
        )  # fmt: skip

        def build(line: dict[str, Any]) -> tuple:
            self.known.add(line["id"])
            return (
                self.new(line["id"]), self.family.pk, line["name"], line["account_type"],
                line["status"], line["currency"], line["institution_name"] or "",
                dec(line["opening_balance"]), day(line["opening_balance_date"]),
                dec(line["reported_balance"]), instant(line["reported_balance_at"]),
                *self._stamps(line),
            )  # fmt: skip

        self._insert("accounts", Account, names, build)

    def labels(self) -> None:
        children: dict[uuid.UUID, list[uuid.UUID]] = {}  # parent -> its subcategories

        def category(line: dict[str, Any]) -> tuple:
            self.known.add(line["id"])
            if line["parent_id"]:
                children.setdefault(self.new(line["parent_id"]), []).append(self.new(line["id"]))
            return (
                self.new(line["id"]), self.family.pk, line["name"], line["color"], line["icon"],
                *self._stamps(line),
            )  # fmt: skip

        self._insert(
            "categories", Category,
            ("id", "family", "name", "color", "icon", "created_at", "updated_at"), category,
        )  # fmt: skip
        for parent, kids in children.items():  # parents once every category exists
            Category.objects.filter(pk__in=kids).update(parent_id=parent)

        def merchant(line: dict[str, Any]) -> tuple:
            self.known.add(line["id"])
            return (self.new(line["id"]), self.family.pk, line["name"], *self._stamps(line))

        self._insert(
            "merchants", Merchant, ("id", "family", "name", "created_at", "updated_at"), merchant
        )

        def tag(line: dict[str, Any]) -> tuple:
            self.known.add(line["id"])
            return (
                self.new(line["id"]), self.family.pk, line["name"], line["color"],
                *self._stamps(line),
            )  # fmt: skip

        self._insert(
            "tags", Tag, ("id", "family", "name", "color", "created_at", "updated_at"), tag
        )

    def securities_(self) -> None:
        """The household's own securities come back as its own; shared reference securities
        are found by ticker and exchange (created when this installation lacks them), all
        of them in one read and the missing ones in one insert."""
        lines = list(self.archive.lines("securities"))
        tickers = {line["ticker"] for line in lines if not line["household"]}
        shared = {
            (ticker, mic): pk
            for ticker, mic, pk in Security.objects.filter(
                family__isnull=True, ticker__in=tickers
            ).values_list("ticker", "exchange_mic", "pk")
        }
        rows = []
        for line in lines:
            mic = line["exchange_mic"] or ""
            found = None if line["household"] else shared.get((line["ticker"], mic))
            if found is not None:
                self.securities[line["id"]] = found
                continue
            created_at, updated_at = self._stamps(line)
            pk = self.new(line["id"])
            rows.append(
                (pk, self.family.pk if line["household"] else None, line["ticker"], line["name"],
                 mic, line["currency"], line["manual"], created_at, updated_at)
            )  # fmt: skip
            self.securities[line["id"]] = pk
        fast_insert(
            Security,
            ("id", "family", "ticker", "name", "exchange_mic", "currency", "manual",
             "created_at", "updated_at"),
            rows,
        )  # fmt: skip

    def rules(self) -> None:
        def build(line: dict[str, Any]) -> tuple:
            return (
                self.new(line["id"]), self.family.pk, line["name"], line["active"], line["match"],
                self.remap(line["conditions"]), self.remap(line["actions"]), line["position"],
                *self._stamps(line),
            )  # fmt: skip

        self._insert(
            "rules", Rule,
            ("id", "family", "name", "active", "match", "conditions", "actions", "position",
             "created_at", "updated_at"),
            build,
        )  # fmt: skip

    def _rule_changes(self, changes: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        if changes is None:
            return None
        return [{**change, "rule": str(self.new(change["rule"]))} for change in changes]

    def transactions(self) -> None:
        family_id, new = self.family.pk, self.new
        rows: list[tuple] = []
        links: list[tuple[uuid.UUID, uuid.UUID]] = []
        done = 0
        for line in self.archive.lines("transactions"):
            pk = new(line["id"])
            rows.append(
                (
                    pk, family_id, new(line["account"]["id"]), day(line["date"]),
                    Decimal(line["stored_amount"]), line["currency"], line["name"], line["notes"],
                    line["external_id"], line["source"], new(ref(line["category"])),
                    new(ref(line["merchant"])), line["kind"], line["pending"], line["excluded"],
                    line["excluded_by_sync"], line["pending_settled"], line["provider_snapshot"],
                    self._rule_changes(line["rule_changes"]), line["edited_fields"],
                    *self._stamps(line),
                )
            )  # fmt: skip
            links.extend((pk, new(tag["id"])) for tag in line["tags"])
            if len(rows) >= CHUNK:
                done += len(rows)
                self._write_rows(rows, links)
                rows, links = [], []
                self._tick("transactions", done)
        done += len(rows)
        self._write_rows(rows, links)
        self._tick("transactions", done)

    def _write_rows(self, rows: list[tuple], links: list[tuple[uuid.UUID, uuid.UUID]]) -> None:
        if rows:
            # rules=False: restored rows already carry what the rules once set.
            self.batch.write_values(TRANSACTION_FIELDS, rows, tag_links=links, rules=False)

    def pairs(self) -> None:
        names = (
            "id",
            "family",
            "inflow_transaction",
            "outflow_transaction",
            "created_at",
            "updated_at",
        )

        def transfer(line: dict[str, Any]) -> tuple:
            pk = self.new(line["id"])
            self.transfer_ids.add(pk)
            return (
                pk, self.family.pk, self.new(line["inflow_transaction"]["id"]),
                self.new(line["outflow_transaction"]["id"]), *self._stamps(line), line["status"],
            )  # fmt: skip

        self._insert("transfers", Transfer, (*names, "status"), transfer)

        def rejected(line: dict[str, Any]) -> tuple:
            return (
                self.new(line["id"]), self.family.pk, self.new(line["inflow_transaction"]["id"]),
                self.new(line["outflow_transaction"]["id"]), *self._stamps(line),
            )  # fmt: skip

        self._insert("rejected_transfers", RejectedTransfer, names, rejected)

    def transfers_not_archived(self) -> list[uuid.UUID]:
        """Pairs the batch's matching suggested that the archive does not have."""
        return list(
            Transfer.objects.filter(family=self.family)
            .exclude(pk__in=self.transfer_ids)
            .values_list("pk", flat=True)
        )

    def kinds_of(self, transaction_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
        """The archived kinds of these restored transactions (read from the archive again)."""
        out = {}
        for line in self.archive.lines("transactions"):
            pk = self.new(line["id"])
            if pk in transaction_ids:
                out[pk] = line["kind"]
        return out


def transactions_kind_set(batch: LedgerBatch, kinds: dict[uuid.UUID, str]) -> None:
    by_kind: dict[str, list[uuid.UUID]] = {}
    for pk, kind in kinds.items():
        by_kind.setdefault(kind, []).append(pk)
    for kind, ids in by_kind.items():
        batch.update_rows(Transaction.objects.filter(pk__in=ids), kind=kind)
