"""The one way into the ledger: a batch of writes whose close derives everything else (its
label writes, tags, edits and transfer legs, are finance/ledger/labels.py's; its writes of
rows given as tuples or staged in the database finance/ledger/tuples.py's).

    with ledger_batch(family=family) as batch:
        batch.add([(txn, tags)])
        batch.update(txn, fields=["amount", "date"])

`ledger_batch` opens (or joins) a database transaction; every operation writes its rows and
records which accounts changed from which day; the batch's close derives balances, transfer
pairs and the SQLite search queue once, inside the same transaction (row counters and tag dates
are kept by triggers as the rows are written). So rows never exist without their balances, and
one row or a million take the same road: a small write takes plain statements, a large one
COPY / executemany (finance/ledger/db/)."""

from __future__ import annotations

import contextlib
import datetime as dt
import uuid
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, NamedTuple

from django.db import connection, models, transaction
from django.db.models import Min, Q, QuerySet
from django.utils import timezone

from core.exact import ExactSum
from finance.ledger.after import PairsLater, derive, merge_account_dates
from finance.ledger.db.fastupdate import fast_update
from finance.ledger.labels import LabelWrites
from finance.ledger.rows import rows_insert
from finance.ledger.rules import BatchRules
from finance.ledger.tuples import TupleWrites
from finance.models import Account, Category, Family, Merchant, Tag, Transaction

# Fields whose change moves an account's balance (the others are labels).
DELETE_BATCH = 5000
# A batch that inserts at least this many rows refreshes the planner's statistics of the
# ledger table at its close (PostgreSQL): a re-import or a sync right after a large import
# would otherwise be planned for the table as it was (a full index range per batch lookup).
ANALYZE_ABOVE = 10_000
# ... of these columns: what the ledger's reads filter, join and order by. The free texts and
# JSON (names, notes, snapshots, edits) are left to autovacuum: sampling them was half the
# statement (150,000 rows: 0.44-0.49 s for all columns, 0.23-0.24 s for these), and the row
# count the planner scales every estimate by is refreshed either way.
ANALYZE_FIELDS = (
    "family", "account", "date", "amount", "currency", "category", "merchant", "import_id",
    "external_id", "source", "kind", "pending", "excluded", "created_at",
)  # fmt: skip
FLOW_FIELDS = frozenset({"account", "account_id", "date", "amount", "excluded", "currency"})


class Was(NamedTuple):
    """Where an edited row's flow was before the edit: its account and day; and, read under
    the row's lock, its stored amount and exclusion, with which the flow moves in place (a
    delete of the row as it was and an add of it as it is) instead of being derived again
    from that day on."""

    # The field names are the transaction's columns: `values_list(*Was._fields)` reads one.
    account_id: uuid.UUID
    date: dt.date
    amount: Decimal | None = None
    excluded: bool | None = None


class LedgerBatch(TupleWrites, LabelWrites):
    """Writes of one unit of work. Use `ledger_batch()`, which closes it."""

    def __init__(self, pairs_later: PairsLater | None = None) -> None:
        self._families: dict[uuid.UUID, Family] = {}
        # Transfer matching is left to this, run after several batches (None: at close).
        self._pairs_later = pairs_later
        self._dates: dict[uuid.UUID, dict[uuid.UUID, dt.date | None]] = {}
        # Per household: the rows created, while creation is all that happened to it.
        self._created: dict[uuid.UUID, list[Transaction] | None] = {}
        # Per household: the ledger-signed flows per account and day that rows added and
        # deleted changed, while that is all that happened to it (balances move in place).
        self._flows: dict[uuid.UUID, dict[uuid.UUID, dict[dt.date, Decimal]] | None] = {}
        # The households whose rows this batch deleted (their flows are not only additions).
        self._removed: set[uuid.UUID] = set()
        # The households' rules, compiled the first time this batch writes their new rows.
        self.rules = BatchRules()
        self.paired = 0
        self.closed = False
        self.inserted = 0

    # -- bookkeeping ----------------------------------------------------------------------
    def _family(self, family: Family | uuid.UUID) -> uuid.UUID:
        if isinstance(family, Family):
            self._families.setdefault(family.pk, family)
            return family.pk
        return family

    def touch(
        self, family: Family | uuid.UUID, account_id: uuid.UUID, date: dt.date | None = None
    ) -> None:
        """The flows of `account_id` changed from `date` on (None: from its first day): trades,
        an account's type or currency, anything that moves a balance without a row here."""
        key = self._family(family)
        merge_account_dates(self._dates.setdefault(key, {}), account_id, date)
        self._created[key] = None
        self._flows[key] = None

    def _flow(self, key: uuid.UUID, account_id: uuid.UUID, day: dt.date, amount: Decimal) -> None:
        flows = self._flows.get(key, {})
        if flows is not None:
            days = flows.setdefault(account_id, {})
            days[day] = days.get(day, Decimal(0)) + amount
            self._flows[key] = flows

    def _touch_rows(self, queryset: QuerySet[Transaction]) -> None:
        """Record the earliest date per account of the rows a statement is about to change."""
        for family_id, account_id, first in (
            queryset.order_by()
            .values("family_id", "account_id")
            .annotate(first=Min("date"))
            .values_list("family_id", "account_id", "first")
        ):
            self.touch(family_id, account_id, first)

    def forget_account(self, account_id: uuid.UUID) -> None:
        """The account is being deleted: nothing to derive for it."""
        for dates in self._dates.values():
            dates.pop(account_id, None)

    # -- rows -------------------------------------------------------------------------------
    def add(
        self, rows: Sequence[tuple[Transaction, list[Tag] | None]], *, rules: bool = True
    ) -> list[tuple[Transaction, bool]]:
        """Insert built rows (with their tags), idempotent by (account, source, external_id):
        returns (row, created) for each, the stored row when its key existed.

        The household's rules run over the new rows first (`rules=False`: not): they change
        the rows in place, and an entry of a `rows` list whose tags they changed is replaced
        by (row, its new tags)."""
        prepare = None
        if rules:

            def prepare(new: Any) -> dict[uuid.UUID, list[Tag]]:
                new_tags = self.rules.apply_to_rows(new)
                if new_tags and isinstance(rows, list):
                    for i, (txn, _tags) in enumerate(rows):
                        if txn.pk in new_tags:
                            rows[i] = (txn, new_tags[txn.pk])
                return new_tags

        results = rows_insert(rows, prepare)
        for txn, created in results:
            if not created:
                continue
            key = self._family(txn.family_id)
            created_rows = self._created.get(key, [])
            merge_account_dates(self._dates.setdefault(key, {}), txn.account_id, txn.date)
            if created_rows is not None:
                created_rows.append(txn)
                self._created[key] = created_rows
            if not txn.excluded:
                self._flow(key, txn.account_id, txn.date, txn.amount)
            else:
                self._flows.setdefault(key, {})  # rows added, no flow (unless touched: None)
        return results

    def update(
        self,
        txn: Transaction,
        *,
        fields: Sequence[str] | None = None,
        was: Was | None = None,
        edited: Iterable[str] = (),
    ) -> None:
        """Save an edited row (`fields`: only these columns). `was`: where its flow was before
        the edit, when a flow may have moved; read from the database (with the stored amount
        and exclusion) when not given: one query, which a caller updating many rows saves by
        passing it from the query that read them. `edited`: fields the household set itself,
        which no rule changes again."""
        edited = [f for f in edited if f not in (txn.edited_fields or ())]
        if edited:
            txn.edited_fields = [*(txn.edited_fields or ()), *edited]
            if fields is not None:
                fields = [*fields, "edited_fields"]
        if fields is None or FLOW_FIELDS & set(fields):
            if was is None:
                was = Was(*Transaction.objects.filter(pk=txn.pk).values_list(*Was._fields).get())
            self._moved(txn, was)
        if fields is None:
            txn.save()
        else:
            txn.save(update_fields=list({*fields, "updated_at"}))

    def update_many(self, changes: Sequence[tuple[Transaction, Sequence[str], Was]]) -> None:
        """Save many edited rows, each given with the fields it changed and where its flow was
        before the edit: a few statements (one per set of fields and 500 rows,
        finance/ledger/db/fastupdate.py) where `update` runs one a row (a re-sync's changed
        rows). Their `updated_at` is one time, as a batch's created rows share one."""
        now = timezone.now()
        groups: dict[frozenset[str], list[Transaction]] = {}
        for txn, fields, was in changes:
            if FLOW_FIELDS & set(fields):
                self._moved(txn, was)
            txn.updated_at = now
            groups.setdefault(frozenset({*fields, "updated_at"}), []).append(txn)
        for fields, txns in groups.items():
            fast_update(Transaction, sorted(fields), txns)

    def _moved(self, txn: Transaction, was: Was) -> None:
        """A row's flow left `was` for where it is now: both days are touched. Given the
        stored amount and exclusion too, the flows of both days are recorded as a delete's
        and a create's are (balances move in place when they can)."""
        key = self._family(txn.family_id)
        pure = self._flows.get(key, {})
        self.touch(key, was.account_id, was.date)
        self.touch(key, txn.account_id, txn.date)
        if was.amount is None or was.excluded is None or pure is None:
            return
        self._removed.add(key)  # the old day may have lost its last row
        self._flows[key] = pure
        if not was.excluded:
            self._flow(key, was.account_id, was.date, -was.amount)
        if not txn.excluded:
            self._flow(key, txn.account_id, txn.date, txn.amount)

    def update_rows(self, queryset: QuerySet[Transaction], **values: Any) -> int:
        """One UPDATE over many rows (categorise, exclude, detach a deleted category)."""
        if FLOW_FIELDS & set(values):
            self._touch_rows(queryset)
        return Transaction.objects.filter(pk__in=queryset.values("pk")).update(
            **values, updated_at=timezone.now()
        )

    def exclude(self, queryset: QuerySet[Transaction], *, excluded: bool) -> int:
        """The household excludes rows from balances and reports (or includes them again):
        its exclusion, which a sync never lifts, even on rows the sync had excluded."""
        changing = queryset.exclude(excluded=excluded, excluded_by_sync=False)
        return self.update_rows(changing, excluded=excluded, excluded_by_sync=False)

    def delete_record(self, record: models.Model) -> None:
        """Delete a record that ledger rows point at (an account with its rows and balances,
        a category, merchant or tag detached from its rows): the cascade is ledger work."""
        if isinstance(record, Account):
            self.delete(Transaction.objects.filter(account=record))
            self.forget_account(record.pk)
        elif isinstance(record, Category):
            self.update_rows(Transaction.objects.filter(category=record), category=None)
        elif isinstance(record, Merchant):
            self.update_rows(Transaction.objects.filter(merchant=record), merchant=None)
        elif isinstance(record, Tag):
            Transaction.tags.through.objects.filter(tag=record).delete()
        with transaction.atomic():
            record.delete()

    def delete(self, queryset: QuerySet[Transaction]) -> int:
        """Delete rows (their tag links and transfers go with them)."""
        groups = list(
            queryset.order_by()
            .values("family_id", "account_id", "date")
            .annotate(total=ExactSum("amount", filter=Q(excluded=False)))
            .values_list("family_id", "account_id", "date", "total")
        )
        pure = {family_id: self._flows.get(family_id, {}) for family_id, *_ in groups}
        for family_id, account_id, day, _total in groups:  # what _touch_rows would read again
            self.touch(family_id, account_id, day)
            self._removed.add(family_id)
        for family_id, account_id, day, total in groups:
            if pure[family_id] is None:
                continue
            self._flows[family_id] = pure[family_id]
            if total is not None:
                self._flow(family_id, account_id, day, -total)
        label = Transaction._meta.label
        total = 0
        while True:
            ids = list(queryset.order_by().values_list("pk", flat=True)[:DELETE_BATCH])
            if not ids:
                return total
            _, per_model = Transaction.objects.filter(pk__in=ids).delete()
            total += per_model.get(label, 0)
            if len(ids) < DELETE_BATCH:
                return total

    # -- balances ---------------------------------------------------------------------------
    def reported_balance(
        self, account: Account, amount: Decimal, at: dt.datetime | None = None
    ) -> bool:
        """A provider (or a statement) reported the account's balance: it anchors the series.
        Returns whether it changed."""
        at = at or timezone.now()
        if account.reported_balance == amount and account.reported_balance_at is not None:
            return False
        Account.objects.filter(pk=account.pk).update(
            reported_balance=amount, reported_balance_at=at, updated_at=timezone.now()
        )
        account.reported_balance, account.reported_balance_at = amount, at
        self.touch(account.family_id, account.pk, None)
        return True

    def reported_balance_clear(self, account: Account) -> None:
        """The account has no reported balance any more: its series follows its flows."""
        Account.objects.filter(pk=account.pk).update(
            reported_balance=None, reported_balance_at=None, updated_at=timezone.now()
        )
        account.reported_balance = account.reported_balance_at = None
        self.touch(account.family_id, account.pk, None)

    # -- close ------------------------------------------------------------------------------
    def close(self) -> int:
        """Derive everything the batch's writes changed; returns transfers suggested."""
        self.closed = True
        missing = [pk for pk in self._dates if pk not in self._families]
        if missing:
            self._families.update((f.pk, f) for f in Family.objects.filter(pk__in=missing))
        for family_id, dates in self._dates.items():
            family = self._families.get(family_id)
            if family is None or not dates:
                continue
            created = self._created.get(family_id)
            flows = self._flows.get(family_id)
            later = self._pairs_later
            self.paired += derive(
                family=family,
                account_dates=dates,
                created=created,
                flows=flows,
                match=later is None,
                only_added=family_id not in self._removed,
            )
            if later is not None:
                later.add(family, dates)
        if self.inserted >= ANALYZE_ABOVE and connection.vendor == "postgresql":
            qn, meta = connection.ops.quote_name, Transaction._meta
            columns = ", ".join(qn(meta.get_field(name).column) for name in ANALYZE_FIELDS)
            with connection.cursor() as cursor:
                cursor.execute(f"ANALYZE {qn(meta.db_table)} ({columns})")
        return self.paired


@contextlib.contextmanager
def ledger_batch(
    *, family: Family | None = None, pairs_later: PairsLater | None = None
) -> Iterator[LedgerBatch]:
    """Open a batch inside a database transaction (joined when one is open); its close runs in
    that same transaction, so a failure anywhere leaves no row and no derived value.
    `pairs_later`: transfer matching is left to it (finance/ledger/after.py), run once the
    caller's batches have all closed."""
    with transaction.atomic():
        batch = LedgerBatch(pairs_later)
        if family is not None:
            batch._family(family)
        yield batch
        batch.close()
