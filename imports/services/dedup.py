"""Duplicates: rows the ledger already holds.

Two kinds, both found in SQL (no per-row queries from Python):
- already imported: a transaction of the row's account with the import's source ("import",
  or a statement format's: "ofx", "camt053", "mt940") and the row's fingerprint (or upstream
  id) as external id (the same file, or an overlapping one, published before);
- from elsewhere (API, provider, manual): transactions of the account with the same date,
  amount, currency and name. With N such transactions, the first N identical rows of the file
  (by occurrence number) are duplicates, the rest are real repeats and are created.
A forced row skips the second check (it can never bypass the unique external id)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from django.db import connection
from django.db.models import Case, Count, F, Max, Min, OuterRef, Q, QuerySet, Subquery, When
from django.db.models.functions import Coalesce
from django.db.models.lookups import GreaterThanOrEqual

from core.planner import hash_joins
from finance.models import Transaction
from imports.models import Import, ImportRow
from imports.services.sources import import_source

CANDIDATE = Q(valid=True, skipped=False, account_id__isnull=False)


def _candidates(imp: Import) -> QuerySet[ImportRow]:
    return ImportRow.objects.filter(CANDIDATE, data_import=imp)


def import_duplicates_mark(*, data_import: Import, written_marked: bool = False) -> int:
    """Bring every row's duplicate mark up to date, set-based: each row's match is computed in
    SQL, and only rows whose mark changes are written (at most two UPDATE statements; none
    when nothing changed since the last call, as at the publish of a re-import). Returns how
    many rows' marks changed. `written_marked`: the rows were just written with their marks
    by `imported_before`'s lookups (a parse): when those are the only duplicates possible,
    nothing is left to check."""
    imp = data_import
    if imp.rows_from_id is not None:
        # Borrowed rows (reuse.py): marked as they are counted, by one join
        # (`import_stats_refresh`, which gives the import rows of its own first when a match
        # from elsewhere needs them).
        return 0
    rows = _candidates(imp)
    match = _match(imp, rows)
    if match is SAME_ID_ONLY:
        return 0 if written_marked else _same_id_mark(imp)
    if match is None:
        return ImportRow.objects.filter(data_import=imp, duplicate=True).update(
            duplicate=False, duplicate_of=None
        )
    # A row that is no longer a candidate (invalid, skipped, without account) has no match.
    every = ImportRow.objects.filter(data_import=imp).annotate(
        match=Case(When(CANDIDATE, then=match), default=None)
    )
    cleared = every.filter(duplicate=True, match__isnull=True).update(
        duplicate=False, duplicate_of=None
    )
    return cleared + every.filter(match__isnull=False).filter(
        Q(duplicate=False) | Q(duplicate_of__isnull=True) | ~Q(duplicate_of=F("match"))
    ).update(duplicate=True, duplicate_of=F("match"))


def imported_before(imp: Import) -> Callable[[list[str]], dict[str, Any]] | None:
    """For a file read into a fixed account that has rows imported from the same source
    before: a lookup of a batch's fingerprints -> the ledger rows they repeat (one indexed
    query per batch), so that a re-import's rows are written marked, never rewritten.
    None: no row of the file can be such a duplicate (the marks wait for
    `import_duplicates_mark`)."""
    if imp.account_id is None:
        return None
    source = import_source(imp)
    ledger = Transaction.objects.filter(account_id=imp.account_id, source=source).exclude(
        import_id=imp.pk
    )
    if not ledger.exists():
        return None
    pg = connection.vendor == "postgresql"
    table = connection.ops.quote_name(Transaction._meta.db_table)
    key = (lambda v: v) if pg else (lambda v: v.hex)
    same = "t.account_id = %s AND t.source = %s AND (t.import_id IS NULL OR t.import_id <> %s)"

    def lookup(fingerprints: list[str]) -> dict[str, Any]:
        if not fingerprints:
            return {}
        known = [key(imp.account_id), source, key(imp.pk)]
        if pg:
            # One probe of the unique (account, source, external id) index per fingerprint,
            # whatever the ledger's size: with `= ANY(...)` the planner read all the
            # account's rows for each batch: a 1M-row re-import's parse took 118 s, the first
            # parse 64). The array is one
            # parameter (5,000 placeholders cost more to bind than the query takes).
            sql = (
                "SELECT k.fp, t.id FROM unnest(%s::text[]) AS k(fp) CROSS JOIN LATERAL "  # noqa: S608
                f"(SELECT t.id FROM {table} AS t WHERE {same} AND t.external_id = k.fp "
                "LIMIT 1) AS t"
            )
            params = [fingerprints, *known]
        else:
            marks = ", ".join(["%s"] * len(fingerprints))
            sql = (
                f"SELECT t.external_id, t.id FROM {table} AS t "  # noqa: S608
                f"WHERE {same} AND t.external_id IN ({marks})"
            )
            params = [*known, *fingerprints]
        with connection.cursor() as cur:
            cur.execute(sql, params)
            return {fp: _uuid(pk) for fp, pk in cur.fetchall()}

    return lookup


def _uuid(value: Any) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(value)


SAME_ID_ONLY = object()  # the only duplicates possible are rows imported before: a join finds them


def _same_id_mark(imp: Import) -> int:
    """The marks when every duplicate is a row imported before (a re-import): one left join
    of the import's rows with the ledger by the unique (account, source, external id) says
    whether any mark changes; only then two UPDATEs write the rows whose mark does."""
    pg = connection.vendor == "postgresql"
    qn = connection.ops.quote_name
    rows, txns = qn(ImportRow._meta.db_table), qn(Transaction._meta.db_table)
    true, false = ("true", "false") if pg else ("1", "0")
    candidate = f"r.valid = {true} AND r.skipped = {false} AND r.account_id IS NOT NULL"
    same = (
        "t.account_id = r.account_id AND t.source = %(source)s AND t.external_id = r.fingerprint"
        " AND (t.import_id IS NULL OR t.import_id <> %(import)s)"
    )
    params = {"import": imp.pk if pg else imp.pk.hex, "source": import_source(imp)}
    distinct = "IS DISTINCT FROM" if pg else "IS NOT"
    with connection.cursor() as cur, hash_joins(cur):
        # One left join says whether any mark is to change (a re-import's publish: none); by
        # hash (core/planner.py): a probe of the ledger's key per row took 1.3 s at 100k.
        cur.execute(
            f"SELECT 1 FROM {rows} AS r LEFT JOIN {txns} AS t ON {candidate} AND {same} "  # noqa: S608
            f"WHERE r.data_import_id = %(import)s AND ((r.duplicate = {true} AND "
            f"(t.id IS NULL OR r.duplicate_of IS NULL OR t.id <> r.duplicate_of)) "
            f"OR (r.duplicate = {false} AND t.id IS NOT NULL)) LIMIT 1",
            params,
        )
        if cur.fetchone() is None:
            return 0
        cur.execute(
            f"UPDATE {rows} AS r SET duplicate = {false}, duplicate_of = NULL "  # noqa: S608
            f"WHERE r.data_import_id = %(import)s AND r.duplicate = {true} AND NOT ({candidate} "
            f"AND EXISTS (SELECT 1 FROM {txns} AS t WHERE {same} AND t.id = r.duplicate_of))",
            params,
        )
        changed = cur.rowcount
        cur.execute(
            f"UPDATE {rows} AS r SET duplicate = {true}, duplicate_of = t.id "  # noqa: S608
            f"FROM {txns} AS t WHERE r.data_import_id = %(import)s AND {candidate} AND {same} "
            f"AND (r.duplicate = {false} OR r.duplicate_of {distinct} t.id)",
            params,
        )
        return changed + cur.rowcount


def _match(imp: Import, rows: QuerySet[ImportRow]) -> Any:
    """The expression of a candidate row's duplicate (the ledger row's id, or NULL), or None
    when no row of the import can have one."""
    span = rows.aggregate(first=Min("date"), last=Max("date"))
    if span["first"] is None:
        return None
    account_ids = list(rows.order_by().values_list("account_id", flat=True).distinct())
    ledger = Transaction.objects.filter(account_id__in=account_ids).exclude(import_id=imp.pk)
    source = import_source(imp)
    matches = []
    if ledger.filter(source=source).exists():
        same_id = Transaction.objects.filter(
            account_id=OuterRef("account_id"),
            source=source,
            external_id=OuterRef("fingerprint"),
        ).exclude(import_id=imp.pk)
        matches.append(Subquery(same_id.values("id")[:1]))
        same_source = True
    else:
        same_source = False
    elsewhere = ledger.filter(date__gte=span["first"], date__lte=span["last"]).filter(
        Q(source__isnull=True) | ~Q(source=source)
    )
    if elsewhere.exists():
        same = elsewhere.filter(
            account_id=OuterRef("account_id"),
            date=OuterRef("date"),
            amount=OuterRef("amount"),
            currency=OuterRef("currency"),
            name=OuterRef("name"),
        )
        count = same.order_by().values("account_id").annotate(n=Count("id")).values("n")[:1]
        first = Subquery(same.order_by("created_at", "id").values("id")[:1])
        matches.append(
            Case(
                When(
                    Q(forced=False) & GreaterThanOrEqual(Subquery(count), F("occurrence")),
                    then=first,
                ),
                default=None,
            )
        )
    if not matches:
        return None
    if same_source and len(matches) == 1:
        return SAME_ID_ONLY
    return matches[0] if len(matches) == 1 else Coalesce(*matches)
