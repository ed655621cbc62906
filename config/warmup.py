"""What a server worker does once before its first request (config/wsgi.py)."""

from __future__ import annotations

import gc

from django.urls import get_resolver


def heap_freeze() -> None:
    """Import every view, serializer and admin module now rather than on the first request,
    then move everything loaded so far out of the garbage collector's reach: the oldest
    generation's collections otherwise walk these long-lived objects each time, a pause that
    lands on list requests (bench/README.md). Under gunicorn this runs in each
    worker, or once in the master with --preload, where it also keeps the pages shared."""
    get_resolver().url_patterns  # noqa: B018
    gc.collect()
    gc.freeze()
