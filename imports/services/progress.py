"""Publish progress, readable while the publish transaction is still open.

The publish writes every row inside one database transaction, so a counter written to the
database would only become visible at the end (and on SQLite a second writer would block behind
it). Progress goes to a small file beside the upload instead: web and worker already share the
media directory (the worker reads the upload from it), writes are atomic renames, and the file's
modification time is the worker's heartbeat."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from django.conf import settings


def _path(import_id: uuid.UUID | str) -> Path:
    return Path(settings.MEDIA_ROOT) / "imports" / "progress" / f"{import_id}"


def progress_write(import_id: uuid.UUID | str, rows: int) -> None:
    path = _path(import_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(str(rows))
    os.replace(tmp, path)


def progress_read(import_id: uuid.UUID | str) -> int | None:
    try:
        return int(_path(import_id).read_text() or 0)
    except (OSError, ValueError):
        return None


def progress_age_seconds(import_id: uuid.UUID | str) -> float | None:
    try:
        return time.time() - _path(import_id).stat().st_mtime
    except OSError:
        return None


def progress_clear(import_id: uuid.UUID | str) -> None:
    _path(import_id).unlink(missing_ok=True)
