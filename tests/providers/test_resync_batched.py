"""A re-sync writes the rows upstream changed in a few statements, not one a row
(`LedgerBatch.update_many`), and each row ends as the one-by-one path left it."""

from __future__ import annotations

import pytest
from django.db import connection as db
from django.test.utils import CaptureQueriesContext

from finance.ledger import ledger_check
from finance.models import Transaction
from providers.models import Sync
from tests.providers.conftest import connect, day, run_sync

pytestmark = pytest.mark.django_db


def _row_updates(queries) -> int:
    return sum(
        q["sql"].lstrip().startswith('UPDATE "finance_transaction"')
        for q in queries.captured_queries
    )


def test_thirty_changed_rows_are_two_updates_and_read_back_as_upstream_has_them(alice, lunchflow):
    s = lunchflow.scenario
    s.add_account("a1", "Checking", "EUR", "100")
    rows = [s.add_transaction("a1", f"t{n}", day(n % 5 + 1), -n - 1, f"ROW {n}") for n in range(40)]
    connection = connect(alice)
    assert run_sync(connection).status == Sync.Status.COMPLETED
    edited = Transaction.objects.get(external_id="t3")
    edited.name = "Named by the household"
    edited.edited_fields = ["name"]
    edited.save(update_fields=["name", "edited_fields"])
    for row in rows[:30]:
        row["amount"] = row["amount"] - 1
        row["description"] = row["description"] + " POSTED"
    with CaptureQueriesContext(db) as queries:
        sync = run_sync(connection)
    assert sync.status == Sync.Status.COMPLETED
    assert sync.stats["transactions_updated"] == 30
    # one statement per set of fields: the 29 the sync rewrites whole, and the edited row,
    # whose name stays the household's
    assert _row_updates(queries) == 2
    stored = {t.external_id: t for t in Transaction.objects.filter(family=alice.family)}
    for n, row in enumerate(rows):
        txn = stored[f"t{n}"]
        changed = n < 30
        assert txn.amount == (n + 2 if changed else n + 1), n  # money out: positive
        if n == 3:
            assert txn.name == "Named by the household"  # the household's edit is kept
        else:
            assert txn.name == (f"ROW {n} POSTED" if changed else f"ROW {n}"), n
    # balances, counters and pairs are what a derivation from scratch gives
    assert ledger_check(family=alice.family).problems == []
