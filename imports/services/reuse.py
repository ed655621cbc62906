"""A re-import reuses the earlier parse: the same file, read the same way, gives the same rows.

An import of a CSV file records its `parse_key` when its rows are complete: a digest of the
file's bytes, the configuration it was read with, its fixed account, the default currency, the
day (dates after it are refused) and the parser's own code. A later import of the household
with the same key copies the earlier import's rows by one INSERT ... SELECT, marked in the
same statement as the ledger rows they repeat (as a parse's RowWriter marks them), instead of
reading, parsing and writing every row again from Python. Only what the parse produced is
copied: what the household did to the earlier rows (skips, forces) and their marks are not.
The mappings are rebuilt from the earlier import's value counts, resolved against the
household's records as they are now.

A re-import into a fixed account does not even copy them: it borrows them (`Import.rows_from`,
the import that holds them). Its counts are read by one left join of the lender's rows with
the ledger by the unique (account, source, external id) key, at parse and again at publish;
a re-import whose every row is already in the ledger publishes without writing a row of any
kind; its rows are listed from the lender's (`imports.selectors.import_row_list`). It gets
its own copy (`rows_borrow_end`, by the copy above) when a row is changed, when it has rows
to publish, when a transaction from elsewhere could match its rows
by date, amount and name (dedup's row-by-row matching needs rows of its own), or before the
lender's rows are parsed again or deleted."""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db import connection
from django.db.models import Max, Min, Q

from core.planner import hash_joins
from finance.ledger import TransactionRows
from finance.models import Transaction
from imports.models import Import, ImportMapping, ImportRow
from imports.services.sources import import_source

# The modules whose code decides what a CSV row parses to: a change to any of them is a new
# parser, whose rows are not the old parser's.
PARSER_FILES = (
    "parsing/csvfile.py",
    "parsing/dates.py",
    "parsing/detect.py",
    "parsing/numbers.py",
    "parsing/rows.py",
    "services/config.py",
    "services/parse.py",
    "services/reuse.py",
)
# The columns a parse writes, copied as they are (`account_id` is the fixed account's).
COPIED = (
    "row_number",
    "raw",
    "date",
    "amount",
    "currency",
    "name",
    "category",
    "tags",
    "notes",
    "account_value",
    "valid",
    "errors",
    "occurrence",
    "fingerprint",
)


@functools.lru_cache(maxsize=1)
def _parser_digest() -> str:
    base = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for name in PARSER_FILES:
        digest.update(name.encode() + b"\0" + (base / name).read_bytes())
    return digest.hexdigest()


def parse_key_of(imp: Import, *, default_currency: str, today: str) -> str:
    """The key of the rows a parse of this import would produce now."""
    digest = hashlib.sha256()
    with imp.file.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    context = {
        "file": digest.hexdigest(),
        "type": imp.type,
        "configuration": imp.configuration,
        "account": str(imp.account_id or ""),
        "currency": default_currency,
        "today": today,
        "parser": _parser_digest(),
    }
    return hashlib.sha256(json.dumps(context, sort_keys=True).encode()).hexdigest()


def earlier_parse(imp: Import, key: str) -> Import | None:
    """The household's latest other import whose complete rows have this key."""
    return (
        Import.objects.filter(family_id=imp.family_id, parse_key=key, parsing=False)
        .exclude(pk=imp.pk)
        .order_by("-created_at", "-id")
        .first()
    )


def lender_hold(earlier: Import, key: str) -> Import | None:
    """The import holding `earlier`'s rows (itself, or the one it borrows from), locked until
    this transaction ends against being parsed again (which lends its rows back first), if
    those rows are still the parse of `key`. None: they are being read anew (a reparse in a
    worker holds the lock, or set `parsing`) or were (another key): copy instead."""
    return (
        Import.objects.select_for_update(no_key=True)
        .filter(pk=earlier.rows_from_id or earlier.pk, parse_key=key, parsing=False)
        .first()
    )


def _sql_values() -> tuple[str, str, Callable[[Any], Any]]:
    """This database's true and false, and how it takes a UUID parameter (SQLite: hex)."""
    if connection.vendor == "postgresql":
        return "true", "false", lambda value: value
    return "1", "0", lambda value: None if value is None else value.hex


def _repeated(alias: str) -> str:
    """The join condition of the ledger row `t` an import row `alias` repeats: the import's
    account (`%(account)s`) and source (`%(source)s`), the row's fingerprint as external id:
    the ledger's unique key, all of it in the index (SQLite probes it alone: 0.55 -> 0.35 s
    for 100,000 rows). The rows are those of an import that has written none itself (a new
    one, or one that borrows: it writes only from a copy of its own, and a publish finding
    rows of its import refuses), so no ledger row is its own."""
    return (
        f"{alias}.fingerprint <> '' AND t.account_id = %(account)s AND t.source = %(source)s "
        f"AND t.external_id = {alias}.fingerprint"
    )


def rows_copy(imp: Import, earlier: Import, *, marked: bool) -> int:
    """Copy the earlier import's rows into `imp` (which holds none) by one statement; returns
    how many. `marked`: each row is written marked as the ledger row it repeats (the same
    account, source and fingerprint), as `dedup.imported_before` marks a parse's rows."""
    pg = connection.vendor == "postgresql"
    qn = connection.ops.quote_name
    rows, txns = qn(ImportRow._meta.db_table), qn(Transaction._meta.db_table)
    true, false, key = _sql_values()
    names = ", ".join(qn(c) for c in COPIED)
    copied = ", ".join(f"e.{qn(c)}" for c in COPIED)
    params: dict[str, Any] = {
        "new": key(imp.pk),
        "earlier": key(earlier.pk),
        "account": key(imp.account_id),
        "source": import_source(imp),
    }
    if marked:
        join = f"LEFT JOIN {txns} AS t ON {_repeated('e')}"
        marks = f"CASE WHEN t.id IS NULL THEN {false} ELSE {true} END, t.id"
    else:
        join, marks = "", f"{false}, NULL"
    account = "CAST(%(account)s AS uuid)" if pg else "%(account)s"
    sql = (
        f"INSERT INTO {rows} (data_import_id, {names}, account_id, skipped, forced, "  # noqa: S608
        "duplicate, duplicate_of, statement_number) "
        f"SELECT %(new)s, {copied}, {account}, {false}, {false}, {marks}, NULL "
        f"FROM {rows} AS e {join} WHERE e.data_import_id = %(earlier)s ORDER BY e.row_number"
    )
    with connection.cursor() as cur, hash_joins(cur):
        # A million rows joined by the ledger's unique key: by hash, never a loop of probes.
        cur.execute(sql, params)
        return cur.rowcount


def mapping_totals(earlier: Import) -> dict[str, Counter[str]]:
    """The value counts the earlier parse found (its mappings carry them)."""
    totals: dict[str, Counter[str]] = {kind: Counter() for kind in ImportMapping.Kind.values}
    for kind, value, count in ImportMapping.objects.filter(data_import=earlier).values_list(
        "kind", "value", "rows_count"
    ):
        totals[kind][value] = count
    return totals


def borrowed_counts(imp: Import) -> dict[str, int]:
    """The row counts of an import that borrows its rows: the lender's rows as parsed, none
    skipped or forced, each valid row a duplicate when the ledger holds its fingerprint in the
    account with the import's source (written by another import). One statement: the
    lender's rows left-joined with the ledger by its unique key, by hash."""
    true, _false, key = _sql_values()
    qn = connection.ops.quote_name
    rows, txns = qn(ImportRow._meta.db_table), qn(Transaction._meta.db_table)
    sql = (
        f"SELECT COUNT(*), COALESCE(SUM(CASE WHEN r.valid = {true} THEN 1 ELSE 0 END), 0), "  # noqa: S608
        "COUNT(t.external_id) "  # the valid rows the ledger holds (the join takes no other)
        f"FROM {rows} AS r LEFT JOIN {txns} AS t ON r.valid = {true} AND {_repeated('r')} "
        "WHERE r.data_import_id = %(lender)s"
    )
    params = {
        "account": key(imp.account_id),
        "source": import_source(imp),
        "lender": key(imp.rows_from_id),
    }
    with connection.cursor() as cur, hash_joins(cur, work_mem="64MB"):
        cur.execute(sql, params)
        total, valid, duplicates = (int(n) for n in cur.fetchone())
    return {
        "rows_count": total,
        "valid_rows_count": valid,
        "invalid_rows_count": total - valid,
        "skipped_rows_count": 0,
        "duplicates_count": duplicates,
        "rows_to_create": valid - duplicates,
        "unresolved_account_rows": 0,
    }


def borrowed_marks_hold(imp: Import, counts: dict[str, int]) -> bool:
    """Whether a borrowing import's marks are what `borrowed_counts` read (`counts`): its rows
    go to a fixed account, and no transaction from elsewhere (another source: the API, a
    provider, a manual entry) in that account falls within its rows' dates. Those are matched
    by date, amount and name, occurrence by occurrence (dedup's `_match`), on rows of its own.
    When the account holds no rows but those its rows repeat (its row counters say so: a
    re-import of the file that fills it), there is none, and no row is read."""
    if imp.account_id is None:
        return False
    held = TransactionRows(
        family_id=imp.family_id,
        accounts=[imp.account_id],
        expense=None,
        fallback=Transaction.objects.filter(account_id=imp.account_id),
    ).count()
    if held == counts["duplicates_count"]:
        return True
    source = import_source(imp)
    elsewhere = (
        Transaction.objects.filter(account_id=imp.account_id)
        .filter(Q(source__isnull=True) | ~Q(source=source))
        .exclude(import_id=imp.pk)
    )
    if not elsewhere.exists():
        return True
    span = ImportRow.objects.filter(data_import_id=imp.rows_from_id, valid=True).aggregate(
        first=Min("date"), last=Max("date")
    )
    if span["first"] is None:
        return True
    return not elsewhere.filter(date__gte=span["first"], date__lte=span["last"]).exists()


def rows_borrow_end(imp: Import) -> bool:
    """Give a borrowing import rows of its own: the lender's, copied by one statement and
    marked as the ledger rows they repeat (same account, source and fingerprint). False: it
    held its own rows already. The caller refreshes the other marks and the counts."""
    lender_id = (
        Import.objects.select_for_update()
        .filter(pk=imp.pk)
        .values_list("rows_from_id", flat=True)
        .first()
    )
    if lender_id is None:
        imp.rows_from = None
        return False
    rows_copy(imp, Import.objects.get(pk=lender_id), marked=True)
    Import.objects.filter(pk=imp.pk).update(rows_from=None)
    imp.rows_from = None
    return True
