"""Bank statement files (OFX/QFX, QIF, CAMT.053, MT940) into the rows, statements and mappings
of an import: the same rows, dedup, publish, readback and revert as a CSV.

- Each statement's account (number or IBAN) is an `account` mapping value, as an account column
  of a CSV; a value this household mapped in an earlier import maps the same way again.
- A row's external id is the bank's own id (OFX FITID, CAMT AcctSvcrRef/NtryRef, MT940 bank
  reference with date and amount) under the format's source, else the content fingerprint with
  its occurrence number (QIF always: it has no ids), exactly as CSV rows.
- A file that cannot be read (not the format, malformed, truncated, a DTD) raises FormatError,
  which the callers turn into a failed import whose error names the line."""

from __future__ import annotations

from collections import Counter
from typing import Any, BinaryIO

from django.db.models import Count

from core.collector import cycles_paused
from finance.currencies import is_currency
from imports.models import Import, ImportMapping, ImportRow, ImportStatement
from imports.parsing.camt import read_camt053
from imports.parsing.detect import HEAD_BYTES, detect_format
from imports.parsing.mt940 import read_mt940
from imports.parsing.ofx import read_ofx
from imports.parsing.qif import read_qif
from imports.parsing.rows import ParsedRow, content_key, fingerprint, occurrence_slot
from imports.parsing.statements import Entry, FormatError, Statement, StatementFile
from imports.services.dedup import import_duplicates_mark
from imports.services.mappings import mappings_sync, rows_accounts_resolve
from imports.services.rows import BATCH_SIZE, STATEMENT_ROW_FIELDS, RowWriter
from imports.services.stats import import_stats_refresh

MAX_STATEMENTS = 10_000
ProgressCallback = Any


DETECTED_TYPES = {
    "csv": Import.Type.TRANSACTION,
    "ofx": Import.Type.OFX,
    "qif": Import.Type.QIF,
    "camt053": Import.Type.CAMT053,
    "mt940": Import.Type.MT940,
}


def import_type_detect(stream: BinaryIO, filename: str) -> str:
    """The import type of an upload from its first bytes, else its name (the stream is left at
    its start)."""
    head = stream.read(HEAD_BYTES)
    stream.seek(0)
    return DETECTED_TYPES[detect_format(head, filename)]


def is_statement_import(data_import: Import) -> bool:
    return data_import.type in Import.STATEMENT_TYPES


def statement_file_open(
    import_type: str, stream: BinaryIO, config: dict[str, str], default_currency: str
) -> StatementFile:
    inflows_positive = config.get("signage_convention", "inflows_positive") == "inflows_positive"
    if import_type == Import.Type.OFX:
        return read_ofx(
            stream, default_currency=default_currency, inflows_positive=inflows_positive
        )
    if import_type == Import.Type.QIF:
        return read_qif(
            stream,
            default_currency=default_currency,
            date_format=config.get("date_format", ""),
            number_format=config.get("number_format", "1,234.56"),
            inflows_positive=inflows_positive,
        )
    if import_type == Import.Type.CAMT053:
        return read_camt053(stream, default_currency=default_currency)
    if import_type == Import.Type.MT940:
        return read_mt940(stream, default_currency=default_currency)
    raise ValueError(f"not a statement format: {import_type}")


def _row(imp: Import, entry: Entry, row_number: int, fixed_id: Any, occurrence: int, fp: str):
    return (
        imp.pk,
        row_number,
        entry.raw,
        entry.date,
        entry.amount,
        entry.currency[:3],
        entry.name[:255],
        entry.category[:255],
        entry.tags,
        entry.notes,
        entry.statement.account[:255],
        fixed_id,
        entry.valid,
        entry.errors,
        occurrence,
        fp,
        entry.skipped,
        entry.statement.number,
    )


def statement_rows_parse(*, data_import: Import, on_progress: ProgressCallback = None) -> None:
    """(Re)build the rows, statements and mappings of a statement-file import. Raises
    FormatError when the file cannot be read (the caller's transaction then keeps nothing)."""
    imp = data_import
    ImportRow.objects.filter(data_import=imp).delete()
    ImportStatement.objects.filter(data_import=imp).delete()
    fixed = imp.account
    fixed_key = str(fixed.pk) if fixed else ""
    currency = fixed.currency if fixed else imp.family.currency
    totals: dict[str, Counter[str]] = {kind: Counter() for kind in ImportMapping.Kind.values}
    occurrences: dict[int, int] = {}
    statements: list[ImportStatement] = []
    rows = RowWriter(STATEMENT_ROW_FIELDS, on_progress)
    last_number = 0
    with imp.file.open("rb") as stream:
        reader = statement_file_open(imp.type, stream, imp.configuration, currency)
        # (No query may run until the rows are finished: they may be streaming.)
        with rows, cycles_paused():  # the loop makes no reference cycles (core/collector.py)
            for item in reader.items:
                if isinstance(item, Statement):
                    statements.append(_statement(imp, item))
                    if len(statements) > MAX_STATEMENTS:
                        raise FormatError(item.line, f"more than {MAX_STATEMENTS} statements")
                    continue
                entry = item
                if entry.currency and not is_currency(entry.currency) and not entry.skipped:
                    entry.problem("currency", entry.currency, "is not an ISO 4217 currency code")
                occurrence, fp = 1, ""
                if entry.valid:
                    key = content_key(
                        ParsedRow(
                            date=entry.date,
                            amount=entry.amount,
                            currency=entry.currency,
                            name=entry.name[:255],
                        )
                    )
                    slot = occurrence_slot(fixed_key or entry.statement.account, key)
                    occurrence = occurrences.get(slot, 0) + 1
                    occurrences[slot] = occurrence
                    fp = entry.upstream_id or fingerprint(key, occurrence)
                    if entry.category:
                        totals[ImportMapping.Kind.CATEGORY][entry.category[:255]] += 1
                    for tag in entry.tags:
                        totals[ImportMapping.Kind.TAG][tag[:255]] += 1
                    if not fixed:
                        totals[ImportMapping.Kind.ACCOUNT][entry.statement.account[:255]] += 1
                # Row numbers are the lines entries start on; entries sharing a line (a file
                # written on one line) take the next free number.
                last_number = max(entry.line, last_number + 1)
                rows.add(_row(imp, entry, last_number, fixed.pk if fixed else None, occurrence, fp))
        count = rows.count  # leaving the block finished the rows
        del occurrences
    ImportStatement.objects.bulk_create(statements, batch_size=BATCH_SIZE)
    _number_repeated_ids(imp)
    imp.headers = reader.headers
    imp.encoding = reader.encoding
    imp.save(update_fields=["headers", "encoding", "updated_at"])
    mappings_sync(imp, totals)
    if _remembered_accounts(imp):
        rows_accounts_resolve(data_import=imp)
    import_duplicates_mark(data_import=imp)
    import_stats_refresh(data_import=imp)
    if on_progress:
        on_progress(count)


def _statement(imp: Import, statement: Statement) -> ImportStatement:
    return ImportStatement(
        data_import=imp,
        number=statement.number,
        account_value=statement.account[:255],
        currency=statement.currency[:3],
        kind=statement.kind[:32],
        reference=statement.reference[:255],
        first_line=statement.line,
        last_line=statement.last_line or statement.line,
        opening_balance=statement.opening_balance,
        opening_date=statement.opening_date,
        closing_balance=statement.closing_balance,
        closing_date=statement.closing_date,
        entries_count=statement.entries,
    )


def _number_repeated_ids(imp: Import) -> None:
    """An upstream id that repeats within one account of the file (a bank reusing ids) gets
    `#2`, `#3`... on its later rows, so that each row still has its own stable external id."""
    rows = ImportRow.objects.filter(data_import=imp, valid=True).exclude(fingerprint="")
    by = ("fingerprint",) if imp.account_id else ("account_value", "fingerprint")
    repeated = rows.values(*by).annotate(n=Count("id")).filter(n__gt=1).order_by()
    for group in repeated:
        group.pop("n")
        same = rows.filter(**group).order_by("row_number").values_list("pk", flat=True)
        for number, pk in enumerate(list(same)[1:], start=2):
            ImportRow.objects.filter(pk=pk).update(fingerprint=f"{group['fingerprint']}#{number}")


def _remembered_accounts(imp: Import) -> int:
    """Statement accounts this household mapped in an earlier import map the same way again
    (a monthly statement of the same account needs no new mapping). Returns how many."""
    open_ = ImportMapping.objects.filter(
        data_import=imp, kind=ImportMapping.Kind.ACCOUNT, target_id__isnull=True, create_new=False
    )
    values = list(open_.values_list("value", flat=True))
    if not values:
        return 0
    from finance.models import Account

    earlier = (
        ImportMapping.objects.filter(
            data_import__family=imp.family,
            data_import__type__in=Import.STATEMENT_TYPES,
            kind=ImportMapping.Kind.ACCOUNT,
            value__in=values,
        )
        .exclude(data_import=imp)
        .order_by("-data_import__created_at")
        .values_list("value", "target_id", "created_id")
    )
    chosen: dict[str, Any] = {}
    for value, target, created in earlier:
        if value not in chosen and (target or created):
            chosen[value] = target or created
    alive = set(
        Account.objects.filter(family=imp.family, pk__in=list(chosen.values())).values_list(
            "pk", flat=True
        )
    )
    done = 0
    for value, target in chosen.items():
        if target in alive:
            done += open_.filter(value=value).update(target_id=target)
    return done


def statement_file_check(*, data_import: Import) -> None:
    """The fast part of parsing, always in the request: the file opens as its format and its
    first entry reads (a wrong or broken file fails at once, before any background work)."""
    imp = data_import
    currency = imp.account.currency if imp.account else imp.family.currency
    with imp.file.open("rb") as stream:
        reader = statement_file_open(imp.type, stream, imp.configuration, currency)
        next(iter(reader.items), None)
