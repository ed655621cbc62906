"""The import pipeline as `bench/workloads/imports.py` measures it: parse, then publish (which
includes the readback verification and the ledger hooks, done in the same task; their own
times are reported beside it)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from finance.ledger import batch as batch_module
from imports.models import Import
from imports.services import publish as publish_module
from imports.services.parse import import_create
from imports.services.publish import import_publish, import_publish_run

CONFIGURATION = {
    "date_col_label": "date",
    "amount_col_label": "amount",
    "name_col_label": "name",
    "category_col_label": "category",
    "notes_col_label": "notes",
    "date_format": "%Y-%m-%d",
    "number_format": "1,234.56",
}


@contextmanager
def _timed(module: Any, name: str, spent: dict[str, float], label: str) -> Iterator[None]:
    """Time every call of `module.name` while the block runs (bench instrumentation only)."""
    original: Callable[..., Any] = getattr(module, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - start

    setattr(module, name, timed)
    try:
        yield
    finally:
        setattr(module, name, original)


def run_pipeline(
    *, user: Any, account: Any, csv_path: Path | str, expect_created: int | None = None
) -> dict[str, float]:
    """Parse and publish the file; `expect_created`: how many ledger rows it must write (a
    re-import of the same file: 0), checked by counting the household's rows."""
    from finance.models import Transaction

    rows_before = Transaction.objects.filter(family=account.family).count()
    started = time.perf_counter()
    with open(csv_path, "rb") as stream:
        imp = import_create(
            family=account.family,
            stream=stream,
            filename=os.path.basename(csv_path),
            size=os.path.getsize(csv_path),
            account=account,
            configuration=CONFIGURATION,
        )
    parsed = time.perf_counter()
    spent: dict[str, float] = {}
    with (
        _timed(publish_module, "import_duplicates_mark", spent, "  of which duplicates check"),
        _timed(publish_module, "_write_transactions", spent, "  of which writes (COPY, tags)"),
        _timed(publish_module, "readback", spent, "  of which verify (readback)"),
        _timed(batch_module, "derive", spent, "  of which ledger (balances, transfers)"),
    ):
        import_publish(data_import=imp, enqueue=False)
        result = import_publish_run(import_id=imp.pk)
    published = time.perf_counter()
    imp = Import.objects.get(pk=imp.pk)
    if result != "matched":
        raise RuntimeError(f"import ended {imp.status} ({result}): {imp.error}")
    written = Transaction.objects.filter(family=account.family).count() - rows_before
    if expect_created is not None and written != expect_created:
        raise RuntimeError(f"the import wrote {written} ledger rows, not {expect_created}")
    return {"parse": parsed - started, "publish": published - parsed, **spent}
