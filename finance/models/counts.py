"""Counters of the ledger's rows, kept by database triggers (finance/row_counts.py)."""

from __future__ import annotations

from django.db import models

from finance.models.household import Family
from finance.models.ledger import Account


class TransactionCount(models.Model):
    """How many transactions an account holds of one sign (`expense`: amount >= 0).

    On PostgreSQL each row is a delta appended by one statement (a key's count is the sum of
    its rows); on SQLite there is one row per key. Written only by the database's triggers."""

    # No constraints: deltas are written while their household or account is being deleted.
    family = models.ForeignKey(
        Family, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    account = models.ForeignKey(
        Account, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    expense = models.BooleanField()
    row_count = models.BigIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["family", "account", "expense"], name="txn_count_key"),
        ]

    def __str__(self) -> str:
        return f"{self.account_id} {'expense' if self.expense else 'income'} {self.row_count}"
