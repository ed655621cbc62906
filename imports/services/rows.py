"""Import rows written in batches as a file is read, never all in memory: on PostgreSQL through
one COPY kept open for the whole file (StreamedInsert), so the server stores a batch while the
next is read and parsed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from finance.ledger import StreamedInsert, fast_insert
from imports.models import ImportRow

BATCH_SIZE = 5000
ROW_FIELDS = (
    "data_import",
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
    "account_id",
    "valid",
    "errors",
    "occurrence",
    "fingerprint",
)
STATEMENT_ROW_FIELDS = (*ROW_FIELDS, "skipped", "statement_number")


class RowWriter:
    """Collects row tuples (in the order of `fields`) and inserts them BATCH_SIZE at a time,
    calling `on_progress` with the count sent after each full batch. `marks`: a lookup of
    a batch's fingerprints -> the ledger rows they repeat (dedup.imported_before): the rows
    are written with their duplicate marks (a re-import's are never rewritten); each batch
    then waits for its lookup, so only rows without marks stream (StreamedInsert).

    A context manager: `finish` (or leaving the block) waits for the server and raises what
    it refused; leaving it on an error keeps none of the streamed rows' COPY."""

    def __init__(
        self,
        fields: tuple[str, ...] = ROW_FIELDS,
        on_progress: Callable[[int], None] | None = None,
        marks: Callable[[list[str]], dict[str, Any]] | None = None,
    ) -> None:
        self.fields = fields
        self.on_progress = on_progress
        self.marks = marks
        self._fp = fields.index("fingerprint")
        self.count = 0
        self._batch: list[tuple] = []
        self._stream = StreamedInsert(ImportRow, fields) if marks is None else None

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            self.finish()
        elif self._stream is not None:
            self._stream.__exit__(exc_type, exc, tb)

    def add(self, row: tuple) -> None:
        self._batch.append(row)
        if len(self._batch) >= BATCH_SIZE:
            self._flush()
            if self.on_progress:
                self.on_progress(self.count)

    def finish(self) -> int:
        """Insert what is left and wait for the server; returns how many rows were written.
        Leaving the block runs it (again, it writes nothing more)."""
        if self._batch:
            self._flush()
        if self._stream is not None:
            self._stream.close()
        return self.count

    def _flush(self) -> None:
        if self._stream is not None:
            self._stream.write(self._batch)
        else:
            at = self._fp
            found = self.marks([r[at] for r in self._batch if r[at]])
            fast_insert(
                ImportRow,
                (*self.fields, "duplicate", "duplicate_of"),
                [(*r, r[at] in found, found.get(r[at])) for r in self._batch],
            )
        self.count += len(self._batch)
        self._batch = []
