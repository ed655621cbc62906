"""Upload and parse: the file is streamed once, rows are written in batches, never all in memory."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable
from typing import Any, BinaryIO

from django.conf import settings
from django.core.files.base import File
from django.db import transaction
from django.utils import timezone

from core.collector import cycles_paused
from core.errors import ApplicationError, Conflict, ValidationFailed
from core.tasks import enqueue_on_commit
from finance.currencies import is_currency
from finance.models import Account, Family
from imports.models import Import, ImportMapping, ImportRow, ImportStatement
from imports.parsing.csvfile import CsvError, find_column, open_csv
from imports.parsing.rows import (
    Columns,
    RowRules,
    content_key,
    fingerprint,
    occurrence_slot,
    parse_row,
)
from imports.parsing.statements import FormatError
from imports.services.config import (
    LABEL_DEFAULTS,
    REQUIRED_LABELS,
    ImportOptions,
    configuration_merge,
)
from imports.services.dedup import import_duplicates_mark, imported_before
from imports.services.formats import (
    is_statement_import,
    statement_file_check,
    statement_rows_parse,
)
from imports.services.lending import import_rows_lent_back
from imports.services.mappings import mappings_sync
from imports.services.progress import progress_clear, progress_write
from imports.services.publish import import_blockers, import_publish
from imports.services.reuse import (
    earlier_parse,
    lender_hold,
    mapping_totals,
    parse_key_of,
    rows_copy,
)
from imports.services.rows import RowWriter
from imports.services.stats import import_stats_refresh

ProgressCallback = Callable[[int], None]


def _columns(headers: list[str], config: dict[str, str], fixed_account: bool) -> Columns:
    found: dict[str, int | None] = {}
    errors: list[str] = []
    for key, default in LABEL_DEFAULTS.items():
        label = config[key]
        index = find_column(headers, label) if label else None
        if index is None and label and (key in REQUIRED_LABELS or label != default):
            errors.append(
                f"{key}: no column named {label!r}; the file's columns are "
                + ", ".join(repr(h) for h in headers)
            )
        found[key.removesuffix("_col_label")] = index
    if errors:
        raise ValidationFailed(errors)
    if fixed_account:
        found["account"] = None
    return Columns(**found)  # type: ignore[arg-type]


def _mapping_values(
    totals: dict[str, Counter[str]], category: str, tags: list[str], account: str
) -> None:
    if category:
        totals[ImportMapping.Kind.CATEGORY][category] += 1
    for tag in tags:
        totals[ImportMapping.Kind.TAG][tag] += 1
    if account:
        totals[ImportMapping.Kind.ACCOUNT][account] += 1


def import_rows_parse(*, data_import: Import, on_progress: ProgressCallback | None = None) -> None:
    """(Re)build the rows and mappings of an import from its file and configuration. A file
    read the same way before by another import of the household has its rows copied from that
    import instead (imports/services/reuse.py)."""
    imp = data_import
    if is_statement_import(imp):
        statement_rows_parse(data_import=imp, on_progress=on_progress)
        return
    config = imp.configuration
    import_rows_lent_back(data_import=imp)
    ImportRow.objects.filter(data_import=imp).delete()
    imp.rows_from = None
    fixed = imp.account
    currency = fixed.currency if fixed else imp.family.currency
    today = dt.date.today()
    key = parse_key_of(imp, default_currency=currency, today=today.isoformat())
    known = imported_before(imp)
    earlier = earlier_parse(imp, key)
    if earlier is not None and fixed is not None:
        earlier = lender_hold(earlier, key)  # the import holding the rows; None: parse
    if earlier is not None:
        if fixed is not None:  # borrowed, not copied: counted and marked by one join
            imp.rows_from = earlier
            count = (earlier.stats or {}).get("rows_count", 0)
        else:
            count = rows_copy(imp, earlier, marked=known is not None)
        headers, encoding = earlier.headers, earlier.encoding
        separator = earlier.configuration.get("col_sep")
        totals = mapping_totals(earlier)
    else:
        rules = RowRules(
            date_format=config["date_format"],
            number_format=config["number_format"],
            inflows_positive=config["signage_convention"] == "inflows_positive",
            default_currency=currency,
            is_currency=is_currency,
            today=today,
        )
        count, headers, encoding, separator, totals = _rows_read(imp, rules, known, on_progress)
    imp.headers = headers
    imp.encoding = encoding
    imp.configuration = {**config, "col_sep": separator}
    imp.parse_key = key
    imp.save(
        update_fields=[
            "headers",
            "encoding",
            "configuration",
            "parse_key",
            "rows_from",
            "updated_at",
        ]
    )
    mappings_sync(imp, totals)
    import_duplicates_mark(data_import=imp, written_marked=known is not None)
    import_stats_refresh(data_import=imp)
    if on_progress:
        on_progress(count)


def _rows_read(
    imp: Import,
    rules: RowRules,
    known: Callable[[list[str]], dict[str, Any]] | None,
    on_progress: ProgressCallback | None,
) -> tuple[int, list[str], str, str, dict[str, Counter[str]]]:
    """Read, parse and write the file's rows; returns (rows written, headers, encoding,
    separator, mapping value counts)."""
    config = imp.configuration
    fixed = imp.account
    totals: dict[str, Counter[str]] = {kind: Counter() for kind in ImportMapping.Kind.values}
    occurrences: dict[int, int] = {}
    with imp.file.open("rb") as stream:
        try:
            reader = open_csv(
                stream,
                separator=config.get("col_sep") or None,
                rows_to_skip=int(config["rows_to_skip"]),
            )
        except CsvError as exc:
            raise ValidationFailed([f"file: {exc}"]) from None
        columns = _columns(reader.headers, config, fixed is not None)
        fixed_key = str(fixed.pk) if fixed else ""
        import_id, fixed_id = imp.pk, fixed.pk if fixed else None  # read once, not per row
        rows = RowWriter(on_progress=on_progress, marks=known)
        # (No query may run until the rows are finished: they may be streaming.)
        with rows, cycles_paused():  # the loop makes no reference cycles (core/collector.py)
            for line_no, cells in reader.rows:
                parsed = parse_row(
                    cells, row_number=line_no, headers=reader.headers, columns=columns, rules=rules
                )
                occurrence, fp = 1, ""
                if parsed.valid:
                    key = content_key(parsed)
                    slot = occurrence_slot(fixed_key or parsed.account, key)
                    occurrence = occurrences.get(slot, 0) + 1
                    occurrences[slot] = occurrence
                    fp = fingerprint(key, occurrence)
                    _mapping_values(totals, parsed.category, parsed.tags, parsed.account)
                rows.add(
                    (
                        import_id,
                        line_no,
                        cells,
                        parsed.date,
                        parsed.amount,
                        parsed.currency[:3],
                        parsed.name[:255],
                        parsed.category,
                        parsed.tags,
                        parsed.notes,
                        parsed.account,
                        fixed_id,
                        parsed.valid,
                        parsed.errors,
                        occurrence,
                        fp,
                    )
                )
        count = rows.count  # leaving the block finished the rows
    return count, reader.headers, reader.encoding, reader.separator, totals


def import_create(
    *,
    family: Family,
    stream: BinaryIO,
    filename: str,
    size: int,
    account: Account | None,
    configuration: ImportOptions,
    on_progress: ProgressCallback | None = None,
    background: bool = False,
    publish: bool = False,
    import_type: str = Import.Type.TRANSACTION,
) -> Import:
    """Store the upload under MEDIA_ROOT and parse it, atomically (a bad file leaves nothing).
    A statement file (OFX, QIF, CAMT, MT940) that cannot be read is kept as a failed import
    whose error names the line."""
    if import_type == Import.Type.QIF and "date_format" not in configuration:
        configuration = {**configuration, "date_format": "%m/%d/%Y"}  # QIF is a US format
    config = configuration_merge({}, configuration)
    imp = Import(family=family, account=account, configuration=config, type=import_type)
    imp.original_filename = (filename or "upload.csv")[:255]
    imp.file_size = size
    imp.file.save(f"{imp.id}.{Import.EXTENSIONS[import_type]}", File(stream), save=False)
    in_background = background and size > settings.IMPORT_SYNC_PARSE_BYTES
    try:
        try:
            import_header_check(data_import=imp)
        except FormatError as exc:
            imp.save()
            import_parse_failed(data_import=imp, error=exc)
            return imp
        with transaction.atomic():
            imp.parsing = in_background
            imp.save()
            if in_background:
                enqueue_on_commit("imports.parse", str(imp.pk), publish)
            else:
                try:
                    with transaction.atomic():
                        import_rows_parse(data_import=imp, on_progress=on_progress)
                except FormatError as exc:
                    import_parse_failed(data_import=imp, error=exc)
    except BaseException:
        imp.file.delete(save=False)
        raise
    return imp


def import_parse_failed(*, data_import: Import, error: FormatError) -> None:
    """The file cannot be read: the import fails with nothing parsed, saying where."""
    imp = data_import
    import_rows_lent_back(data_import=imp)
    ImportRow.objects.filter(data_import=imp).delete()
    ImportStatement.objects.filter(data_import=imp).delete()
    ImportMapping.objects.filter(data_import=imp).delete()
    message = f"The file cannot be read: {error}"[:1000]
    Import.objects.filter(pk=imp.pk).update(
        status=Import.Status.FAILED,
        parsing=False,
        error=message,
        parse_key=None,
        rows_from=None,
        updated_at=timezone.now(),
    )
    imp.rows_from = None
    import_stats_refresh(data_import=imp)
    imp.refresh_from_db()


def import_header_check(*, data_import: Import) -> None:
    """The fast part of parsing, always in the request: the file opens, the header is unique
    and names the configured columns (a 422 at once, before any background work)."""
    imp = data_import
    if is_statement_import(imp):
        statement_file_check(data_import=imp)
        return
    config = imp.configuration
    with imp.file.open("rb") as stream:
        try:
            reader = open_csv(
                stream,
                separator=config.get("col_sep") or None,
                rows_to_skip=int(config["rows_to_skip"]),
            )
        except CsvError as exc:
            raise ValidationFailed([f"file: {exc}"]) from None
        _columns(reader.headers, config, imp.account_id is not None)


def import_parse_run(*, import_id: str, publish: bool = False) -> str:
    """The worker side of a large upload: parse, then publish when the upload asked for it."""
    imp = Import.objects.select_related("family", "account").filter(pk=import_id).first()
    if imp is None or not imp.parsing:
        return "skipped"
    try:
        with transaction.atomic():
            locked = Import.objects.select_for_update().get(pk=imp.pk)
            if not locked.parsing:
                return "skipped"
            import_rows_parse(data_import=imp, on_progress=lambda n: progress_write(imp.pk, n))
            Import.objects.filter(pk=imp.pk).update(parsing=False, error="")
    except ApplicationError as exc:
        message = "; ".join(exc.errors or [exc.message])
        Import.objects.filter(pk=imp.pk).update(parsing=False, error=message[:1000])
        return "failed"
    except FormatError as exc:
        import_parse_failed(data_import=imp, error=exc)
        return "failed"
    finally:
        progress_clear(imp.pk)
    imp.refresh_from_db()
    if publish:
        blockers = import_blockers(data_import=imp)
        if blockers:
            Import.objects.filter(pk=imp.pk).update(error="Not published: " + "; ".join(blockers))
        else:
            import_publish(data_import=imp)
    return "parsed"


def import_configure(
    *,
    data_import: Import,
    account: Account | Any | None,
    changes: ImportOptions,
    background: bool = False,
) -> Import:
    """New configuration (or fixed account): the rows are parsed again."""
    imp = data_import
    with transaction.atomic():
        locked = Import.objects.select_for_update().get(pk=imp.pk)
        if locked.parsing:
            raise Conflict("The import is pending and its file is still being parsed.")
        if locked.status != Import.Status.PENDING:
            raise Conflict(
                f"The import is {locked.status}: its configuration can change only while pending."
            )
        imp.configuration = configuration_merge(locked.configuration, changes)
        if account is not ...:
            imp.account = account
        try:
            import_header_check(data_import=imp)
        except FormatError as exc:
            imp.save(update_fields=["configuration", "account", "updated_at"])
            import_parse_failed(data_import=imp, error=exc)
            return imp
        imp.parsing = background and imp.file_size > settings.IMPORT_SYNC_PARSE_BYTES
        imp.save(update_fields=["configuration", "account", "parsing", "updated_at"])
        if imp.parsing:
            enqueue_on_commit("imports.parse", str(imp.pk), False)
        else:
            try:
                with transaction.atomic():
                    import_rows_parse(data_import=imp)
            except FormatError as exc:
                import_parse_failed(data_import=imp, error=exc)
    return imp
