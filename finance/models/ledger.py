"""The ledger: accounts, their daily balances, categories, merchants, tags, transactions and
transfers. Every row belongs to exactly one household (`family`)."""

from __future__ import annotations

import functools
import uuid
from typing import Any, Protocol

from django.db import models
from django.db.models import Q

from core.bounds import validate_amount, validate_date
from core.exact import ExactDecimalField
from core.keys import uuid7
from finance.models.household import Family


class Counted(Protocol):
    """Something that counts a queryset's rows more cheaply (the ledger's row counters)."""

    def count(self) -> int: ...


AMOUNT = {"max_digits": 19, "decimal_places": 4}
# Balances and sums of any number of rows (each below 10^13: core/bounds.py) fit this.
BALANCE = {"max_digits": 38, "decimal_places": 4}


class Account(models.Model):
    class Type(models.TextChoices):
        DEPOSITORY = "depository"
        CREDIT_CARD = "credit_card"
        INVESTMENT = "investment"
        CRYPTO = "crypto"
        LOAN = "loan"
        PROPERTY = "property"
        VEHICLE = "vehicle"
        OTHER_ASSET = "other_asset"
        OTHER_LIABILITY = "other_liability"

    class Status(models.TextChoices):
        ACTIVE = "active"
        DRAFT = "draft"
        DISABLED = "disabled"
        PENDING_DELETION = "pending_deletion"

    LIABILITY_TYPES = frozenset({Type.CREDIT_CARD, Type.LOAN, Type.OTHER_LIABILITY})
    TRADING_TYPES = frozenset({Type.INVESTMENT, Type.CRYPTO})

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="accounts")
    name = models.CharField(max_length=255)
    account_type = models.CharField(max_length=32, choices=Type.choices, default=Type.DEPOSITORY)
    status = models.CharField(max_length=32, choices=Status.choices, default=Status.ACTIVE)
    currency = models.CharField(max_length=3)
    balance = ExactDecimalField(**BALANCE, default=0)
    # What a bank-data provider last reported; when set it anchors the balance series.
    reported_balance = ExactDecimalField(**BALANCE, null=True, blank=True)
    # A manual account's balance as of a day, given by the household: the series is derived
    # from it (flows after the day move it; flows on or before it are part of it).
    opening_balance = ExactDecimalField(**BALANCE, null=True, blank=True)
    opening_balance_date = models.DateField(null=True, blank=True)
    reported_balance_at = models.DateTimeField(null=True, blank=True)
    # Investment and crypto accounts: the market value of the holdings that `balance` counts
    # (balance = cash + holdings_value), kept by the ledger with the balance. NULL for others.
    holdings_value = ExactDecimalField(**BALANCE, null=True, blank=True)
    institution_name = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        indexes = [models.Index(fields=["family", "status"], name="account_family_status")]

    def __str__(self) -> str:
        return self.name

    @property
    def classification(self) -> str:
        return "liability" if self.account_type in self.LIABILITY_TYPES else "asset"


class AccountBalance(models.Model):
    """The balance of an account at the end of one day, in the account's currency."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="balances")
    date = models.DateField()
    balance = ExactDecimalField(**BALANCE)
    currency = models.CharField(max_length=3)

    class Meta:
        ordering = ["date"]
        constraints = [
            models.UniqueConstraint(fields=["account", "date"], name="account_balance_one_per_day")
        ]

    def __str__(self) -> str:
        return f"{self.account_id} {self.date} {self.balance}"


class Category(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="categories")
    name = models.CharField(max_length=255)
    color = models.CharField(max_length=7, default="#6172F3")
    icon = models.CharField(max_length=64, blank=True, default="")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="subcategories"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "categories"
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["family", "name"], name="category_name_per_family")
        ]

    def __str__(self) -> str:
        return self.name


class Merchant(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="merchants")
    name = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["family", "name"], name="merchant_name_per_family")
        ]

    def __str__(self) -> str:
        return self.name


class Tag(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="tags")
    name = models.CharField(max_length=255)
    color = models.CharField(max_length=7, default="#6172F3")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["family", "name"], name="tag_name_per_family")
        ]

    def __str__(self) -> str:
        return self.name


class TransactionQuerySet(models.QuerySet):
    def counted_by(self, counted: Counted) -> TransactionQuerySet:
        """This queryset, whose `count()` reads `counted`, an equivalent and cheaper query
        (or the row counters, finance/ledger/db/row_counts.py).

        Only this instance carries it: every queryset derived from it (a filter, a slice)
        counts itself again, so a further filter can never inherit a count it changed."""
        clone = self._chain()
        clone._counted_by = counted
        return clone

    def count(self) -> int:
        counted = getattr(self, "_counted_by", None)
        if counted is not None and self._result_cache is None:
            return counted.count()
        return super().count()

    def paged_by(self, keys: models.QuerySet, rows: models.QuerySet) -> TransactionQuerySet:
        """This queryset, whose pages are picked by `keys`, the same filters and order over
        narrow rows annotated with `window_total` (COUNT(*) OVER ()), and then read from
        `rows` (the household's rows with their relations) by primary key alone.

        The matches are sorted and counted in one pass without this queryset's joins and wide
        columns (which spilled a search's 12,000 matches to disk at 1M rows), and the filters
        run once. As with `counted_by`, only this instance carries it."""
        clone = self._chain()
        clone._paged_by = (keys, rows)
        return clone

    def page_rows(self, offset: int, limit: int) -> tuple[list[Transaction], int | None]:
        """The rows of one page, and the total when this read gives it for free (else None)."""
        paged_by = getattr(self, "_paged_by", None)
        if paged_by is None:
            return list(self[offset : offset + limit]), None
        keys, rows = paged_by
        head = list(keys.values_list("pk", "window_total")[offset : offset + limit])
        if not head:
            return [], None
        by_pk = {row.pk: row for row in rows.order_by().filter(pk__in=[pk for pk, _ in head])}
        return [by_pk[pk] for pk, _ in head], head[0][1]


class Transaction(models.Model):
    """One ledger entry. Sign: positive = money leaving the account, negative = entering."""

    class Kind(models.TextChoices):
        STANDARD = "standard"
        FUNDS_MOVEMENT = "funds_movement"
        CC_PAYMENT = "cc_payment"
        LOAN_PAYMENT = "loan_payment"
        ONE_TIME = "one_time"
        INVESTMENT_CONTRIBUTION = "investment_contribution"

    # Where a list's rows carry their tags, read by one query for the page (a plain list: the
    # default prefetch gave each row a queryset pointing back at its row, which made every row
    # of a page garbage only the slowest garbage collection frees).
    PREFETCHED_TAGS = "prefetched_tags"
    # Set on a row just written whose relations, tags and transfers are all in hand
    # (finance/services/transactions.py, `transaction_as_written`): it answers as it is.
    AS_WRITTEN = "as_written"
    # The reverse relations to the transfer a row is the inflow or the outflow leg of
    # (Transfer's one-to-one fields below): a row's `transfer` in the API.
    TRANSFER_LEGS = ("transfer_as_inflow", "transfer_as_outflow")

    # Time-ordered keys (core/keys.py): a batch's new rows fill the key index's last pages,
    # and drawing one takes ~1.4 us against uuid4's 5-10 us (a system call each).
    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    # Denormalised from the account so that every list query filters one indexed column.
    family = models.ForeignKey(
        Family, on_delete=models.CASCADE, related_name="transactions", db_index=False
    )
    account = models.ForeignKey(
        Account, on_delete=models.CASCADE, related_name="transactions", db_index=False
    )
    date = models.DateField(validators=[validate_date])
    amount = ExactDecimalField(**AMOUNT, validators=[validate_amount])
    currency = models.CharField(max_length=3)
    name = models.CharField(max_length=255)
    notes = models.TextField(null=True, blank=True)
    external_id = models.CharField(max_length=255, null=True, blank=True)
    source = models.CharField(max_length=64, null=True, blank=True)
    category = models.ForeignKey(
        Category,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="transactions",
        db_index=False,
    )
    merchant = models.ForeignKey(
        Merchant,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="transactions",
        db_index=False,
    )
    tags = models.ManyToManyField(
        Tag, blank=True, related_name="transactions", through="TransactionTag"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices, default=Kind.STANDARD)
    pending = models.BooleanField(default=False)
    excluded = models.BooleanField(default=False)
    # True while the exclusion is the provider sync's (a vanished pending row gone stale), not
    # the household's: the sync lifts its own exclusion when upstream sends the row again and
    # never touches the household's (docs/decisions.md, "Sync rules").
    excluded_by_sync = models.BooleanField(default=False)
    # A posted provider row that is already the posted version of a pending row (its own
    # pending self, or a pending row it took over): it takes over no other pending row.
    pending_settled = models.BooleanField(default=False)
    # The provider's last raw snapshot of this row (sync compares it to detect changes).
    provider_snapshot = models.JSONField(null=True, blank=True)
    # The digest of that snapshot as the sync wrote it (providers/sync/apply.py): a re-sync
    # compares digests, not snapshots. NULL: not known (rows synced before the column, restored
    # rows); the sync then compares the snapshot itself and stores its digest. Nullable without
    # a default, so that adding the column rebuilds no table (SQLite keeps its triggers).
    provider_snapshot_hash = models.CharField(max_length=64, null=True, blank=True, editable=False)
    # The import that created this row, if any (imports revert exactly what they created).
    import_id = models.UUIDField(null=True, blank=True)
    # What the household's rules set on this row, in order of application:
    # [{"rule": "<rule id>", "set": ["category", "tags", ...]}] (the API shows `rule_ids`).
    # NULL: none. (Nullable without a default, so that adding the column rebuilds no table.)
    rule_changes = models.JSONField(null=True, blank=True)
    # Fields the household edited itself (API PATCH, admin): no rule ever changes them again,
    # and a provider's re-sync leaves them as they are. NULL: none.
    edited_fields = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TransactionQuerySet.as_manager()

    class Meta:
        ordering = ["-date", "-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["account", "source", "external_id"],
                condition=Q(external_id__isnull=False),
                name="transaction_external_id_per_account_source",
            )
        ]
        indexes = [
            # Each list filter has an index that also holds the list order, so a page never
            # sorts its matches and the count reads an index (bench/README.md). An account,
            # a category and a merchant each belong to one household, so their indexes lead
            # with them, not the household: each serves its list filter, the foreign key's
            # checks and deletes, and (the account's) the balances; the category's and the
            # merchant's leave out the rows without one, and end with the household, so the
            # count of a filtered list (scoped to it too) reads only them: without it, SQLite
            # read 50,000 rows of a 1M ledger for one category. Nine indexes where there were
            # fourteen: every row written pays for each (docs/decisions.md, "Ledger indexes").
            models.Index(fields=["family", "-date", "-created_at", "-id"], name="txn_family_order"),
            models.Index(
                fields=["account", "-date", "-created_at", "-id"], name="txn_account_order"
            ),
            models.Index(
                fields=["category", "-date", "-created_at", "-id", "family"],
                condition=Q(category__isnull=False),
                name="txn_category_order",
            ),
            models.Index(
                fields=["merchant", "-date", "-created_at", "-id", "family"],
                condition=Q(merchant__isnull=False),
                name="txn_merchant_order",
            ),
            models.Index(fields=["family", "amount"], name="txn_family_amount"),
            models.Index(
                fields=["import_id"], condition=Q(import_id__isnull=False), name="txn_import"
            ),
        ]

    def __str__(self) -> str:
        """ "Salary, Acme Corp, 25 Nov 2026": how the household's screens name a transaction."""
        from django.utils.formats import date_format

        day = date_format(self.date) if hasattr(self.date, "year") else self.date
        return f"{self.name or '(no name)'}, {day}"

    @property
    def classification(self) -> str:
        return "income" if self.amount < 0 else "expense"

    @property
    def rule_ids(self) -> list[str]:
        """The rules that changed this row, in the order they first did."""
        return [change["rule"] for change in self.rule_changes or ()]

    @property
    def rule_set_fields(self) -> set[str]:
        """Every field a rule set on this row."""
        return {field for change in self.rule_changes or () for field in change["set"]}


class TransactionTag(models.Model):
    """A tag on a transaction (the table Django made for `Transaction.tags`), with copies of the
    transaction's date and household so one index answers a tag's page and its exact count.

    The copies are kept by database triggers (finance/tag_dates.py), not by the ORM: links and
    transactions are also written with COPY / executemany and `.update()`. They are NULL only
    between a SQLite insert and its AFTER INSERT trigger (SQLite triggers cannot change NEW)."""

    transaction = models.ForeignKey(Transaction, on_delete=models.CASCADE, related_name="tag_links")
    # Its index is the leading column of `txn_tag_family_date` (a tag's deletion reads it).
    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, db_index=False)
    date = models.DateField(null=True, editable=False)
    # The transaction's household; no constraint of its own: links go with their transaction.
    family = models.ForeignKey(
        Family,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        null=True,
        editable=False,
        related_name="+",
    )

    class Meta:
        db_table = "finance_transaction_tags"
        unique_together = [("transaction", "tag")]
        indexes = [
            # The `tag_ids[]` list's page in order and its count, index only (bench/README.md).
            models.Index(
                fields=["tag", "family", "-date", "-transaction"], name="txn_tag_family_date"
            )
        ]

    def __str__(self) -> str:
        return f"{self.transaction_id} #{self.tag_id}"


class Transfer(models.Model):
    """Two transactions of one household recognised as money moving between its accounts."""

    class Status(models.TextChoices):
        PENDING = "pending"
        CONFIRMED = "confirmed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="transfers")
    inflow_transaction = models.OneToOneField(
        Transaction, on_delete=models.CASCADE, related_name="transfer_as_inflow"
    )
    outflow_transaction = models.OneToOneField(
        Transaction, on_delete=models.CASCADE, related_name="transfer_as_outflow"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        """ "Monthly savings, 2 Nov 2026" (the outflow's name and day): no ids on screens."""
        return f"Transfer: {self.outflow_transaction}"


class RejectedTransfer(models.Model):
    """A pair the household said is not a transfer: never suggested again."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="rejected_transfers")
    inflow_transaction = models.ForeignKey(
        Transaction, on_delete=models.CASCADE, related_name="rejected_as_inflow"
    )
    outflow_transaction = models.ForeignKey(
        Transaction, on_delete=models.CASCADE, related_name="rejected_as_outflow"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["inflow_transaction", "outflow_transaction"],
                name="rejected_transfer_unique_pair",
            )
        ]

    def __str__(self) -> str:
        return f"Rejected transfer: {self.outflow_transaction}"


@functools.cache
def transfer_relations() -> tuple[Any, ...]:
    """The reverse relations of `Transaction.TRANSFER_LEGS` (inflow first), read once."""
    return tuple(Transaction._meta.get_field(name) for name in Transaction.TRANSFER_LEGS)
