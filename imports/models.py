"""Imports: an uploaded file, its parsed rows, and the mapping of its values to ledger records."""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q

from core.exact import ExactDecimalField
from finance.models import Account, Family


def import_upload_path(instance: Import, filename: str) -> str:
    extension = Import.EXTENSIONS.get(instance.type, "csv")
    return f"imports/{instance.family_id}/{instance.id}.{extension}"


def empty_verification() -> dict:
    return {"expected_record_counts": {}, "readback": {"status": "not_verified"}}


class Import(models.Model):
    class Type(models.TextChoices):
        TRANSACTION = "TransactionImport", "CSV"
        OFX = "OfxImport", "OFX / QFX"
        QIF = "QifImport", "QIF"
        CAMT053 = "Camt053Import", "CAMT.053"
        MT940 = "Mt940Import", "MT940"

    # Bank statement formats (imports/services/formats.py); the rest is CSV.
    STATEMENT_TYPES = (Type.OFX, Type.QIF, Type.CAMT053, Type.MT940)
    EXTENSIONS = {
        Type.TRANSACTION: "csv",
        Type.OFX: "ofx",
        Type.QIF: "qif",
        Type.CAMT053: "xml",
        Type.MT940: "sta",
    }

    class Status(models.TextChoices):
        PENDING = "pending"
        IMPORTING = "importing"
        COMPLETE = "complete"
        FAILED = "failed"
        REVERTING = "reverting"
        REVERT_FAILED = "revert_failed"

    PUBLISHABLE_FROM = (Status.PENDING, Status.FAILED)
    REVERTABLE_FROM = (Status.COMPLETE, Status.REVERT_FAILED)
    TERMINAL = (Status.COMPLETE, Status.FAILED, Status.REVERT_FAILED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    family = models.ForeignKey(Family, on_delete=models.CASCADE, related_name="imports")
    # The fixed account every row goes to; null when the file has an account column.
    account = models.ForeignKey(
        Account, null=True, blank=True, on_delete=models.SET_NULL, related_name="imports"
    )
    type = models.CharField(max_length=32, choices=Type.choices, default=Type.TRANSACTION)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    configuration = models.JSONField(default=dict)
    # The upload lives on disk under MEDIA_ROOT (files up to 100 MB do not belong in the DB).
    file = models.FileField(upload_to=import_upload_path, max_length=255, blank=True)
    original_filename = models.CharField(max_length=255, blank=True, default="")
    file_size = models.BigIntegerField(default=0)
    headers = models.JSONField(default=list)
    encoding = models.CharField(max_length=32, blank=True, default="")
    error = models.TextField(blank=True, default="")
    verification = models.JSONField(default=empty_verification)
    stats = models.JSONField(default=dict)
    rows_processed = models.BigIntegerField(default=0)
    # True while a large upload is parsed by a worker (rows are not complete yet).
    parsing = models.BooleanField(default=False)
    # Reported balances this import set from its statements' closing balances, with the values
    # they replaced, so that a revert puts them back: [{account_id, balance, at, previous_*}].
    balances_set = models.JSONField(default=list, blank=True)
    # What the rows were parsed from (imports/services/reuse.py): the file's digest, the
    # configuration, the fixed account, the default currency, the day and the parser's code.
    # A later import with the same key copies these rows instead of parsing the file again.
    # NULL: no complete parse of a CSV file.
    parse_key = models.CharField(max_length=64, null=True, blank=True, editable=False)
    # A re-import of a file read the same way borrows the earlier import's rows instead of
    # holding a copy (imports/services/reuse.py): its rows are those rows as parsed, none
    # skipped or forced, marked against the ledger when read. It gets a copy of its own the
    # first time a row is changed, or when it has rows to publish; the lender's
    # rows are copied to its borrowers before they are parsed again or deleted (`lending.py`;
    # the database's foreign key refuses a lender deleted any other way, and a household
    # deleted whole takes both). NULL: the import holds its own rows.
    rows_from = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        related_name="rows_lent",
        editable=False,
    )
    published_at = models.DateTimeField(null=True, blank=True)
    reverted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["family", "-created_at"], name="import_family_created"),
            models.Index(fields=["status", "updated_at"], name="import_status_updated"),
            models.Index(
                fields=["family", "parse_key"],
                name="import_family_parse_key",
                condition=models.Q(parse_key__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        """How the household's screens name an import: its file's name."""
        return self.original_filename or "Import"

    @property
    def uploaded(self) -> bool:
        """Whether an upload is stored, read from the column without `self.file`: the file
        descriptor's FieldFile and its row point at each other, so every row of a list page
        that touched it waited for the cycle collector's slowest collection to be freed."""
        if "file" not in self.__dict__:  # deferred
            return bool(self.file)
        value = self.__dict__["file"]  # the stored name, or the FieldFile once it was touched
        return bool(getattr(value, "name", value))


class ImportRow(models.Model):
    """One data line of the file. Row numbers are the file's line numbers."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: the unique (data_import, row_number) serves every lookup by import.
    data_import = models.ForeignKey(
        Import, on_delete=models.CASCADE, related_name="rows", db_index=False
    )
    row_number = models.IntegerField()
    raw = models.JSONField(default=list)
    date = models.DateField(null=True, blank=True)
    amount = ExactDecimalField(max_digits=19, decimal_places=4, null=True, blank=True)
    currency = models.CharField(max_length=3, blank=True, default="")
    name = models.CharField(max_length=255, blank=True, default="")
    category = models.CharField(max_length=255, blank=True, default="")
    tags = models.JSONField(default=list, blank=True)
    notes = models.TextField(blank=True, default="")
    account_value = models.CharField(max_length=255, blank=True, default="")
    # The ledger account the row goes to, once known (fixed account, or a resolved mapping).
    account_id = models.UUIDField(null=True, blank=True)
    valid = models.BooleanField(default=True)
    errors = models.JSONField(default=list, blank=True)
    skipped = models.BooleanField(default=False)
    duplicate = models.BooleanField(default=False)
    # The existing transaction this row repeats (from the API, a provider, or an earlier import).
    duplicate_of = models.UUIDField(null=True, blank=True)
    forced = models.BooleanField(default=False)
    occurrence = models.IntegerField(default=1)
    # The external id the row's transaction gets: a content fingerprint, or a statement
    # format's upstream id (an OFX FITID can be long).
    fingerprint = models.CharField(max_length=255, blank=True, default="")
    # The statement of a bank statement file the row belongs to (ImportStatement.number).
    statement_number = models.IntegerField(null=True, blank=True)
    # Which transaction a row became is not stored (writing it cost a second pass over every
    # row at publish): `imports.selectors.with_transaction_ids` reads it by the unique key.

    class Meta:
        ordering = ["row_number"]
        constraints = [
            models.UniqueConstraint(fields=["data_import", "row_number"], name="import_row_number")
        ]
        # Every row written pays for every index (a re-import writes 100,000 at once): the
        # invalid and the duplicate rows, the ones looked for, are indexed alone; a list of
        # valid or unmarked rows walks the unique (data_import, row_number) index.
        indexes = [
            models.Index(
                fields=["data_import", "row_number"],
                name="import_row_invalid",
                condition=models.Q(valid=False),
            ),
            models.Index(
                fields=["data_import", "row_number"],
                name="import_row_duplicate_only",
                condition=models.Q(duplicate=True),
            ),
        ]

    family_path = "data_import__family"

    def __str__(self) -> str:
        return f"row {self.row_number}"


class ImportMapping(models.Model):
    class Kind(models.TextChoices):
        CATEGORY = "category"
        TAG = "tag"
        ACCOUNT = "account"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    data_import = models.ForeignKey(Import, on_delete=models.CASCADE, related_name="mappings")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    value = models.CharField(max_length=255)
    target_id = models.UUIDField(null=True, blank=True)
    create_new = models.BooleanField(default=False)
    # The record this import created for the mapping on publish (revert removes it if unused).
    created_id = models.UUIDField(null=True, blank=True)
    rows_count = models.IntegerField(default=0)

    family_path = "data_import__family"

    class Meta:
        ordering = ["kind", "value"]
        constraints = [
            models.UniqueConstraint(
                fields=["data_import", "kind", "value"], name="import_mapping_unique_value"
            )
        ]
        indexes = [
            models.Index(
                fields=["data_import", "kind"],
                condition=Q(target_id__isnull=True, create_new=False),
                name="import_mapping_unassigned",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.value}"

    @property
    def resolved(self) -> bool:
        return self.target_id is not None or self.create_new


class ImportStatement(models.Model):
    """One statement of a bank statement file (OFX, QIF, CAMT.053, MT940): the account it is
    for (mapped like an account column value) and the balances the bank gave."""

    id = models.BigAutoField(primary_key=True)
    data_import = models.ForeignKey(Import, on_delete=models.CASCADE, related_name="statements")
    number = models.IntegerField()
    account_value = models.CharField(max_length=255, blank=True, default="")
    currency = models.CharField(max_length=3, blank=True, default="")
    kind = models.CharField(max_length=32, blank=True, default="")
    reference = models.CharField(max_length=255, blank=True, default="")
    first_line = models.IntegerField(default=0)
    last_line = models.IntegerField(default=0)
    # In the file's sign: positive is money on the account.
    opening_balance = ExactDecimalField(max_digits=19, decimal_places=4, null=True, blank=True)
    opening_date = models.DateField(null=True, blank=True)
    closing_balance = ExactDecimalField(max_digits=19, decimal_places=4, null=True, blank=True)
    closing_date = models.DateField(null=True, blank=True)
    entries_count = models.IntegerField(default=0)

    family_path = "data_import__family"

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(
                fields=["data_import", "number"], name="import_statement_number"
            )
        ]

    def __str__(self) -> str:
        return f"statement {self.number}: {self.account_value}"
