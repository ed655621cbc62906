"""Celery tasks: thin, call one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="finance.tidy_row_counts", expires=600)
def row_counts_tidy_task() -> str:
    from finance.ledger import row_counts_tidy

    return f"{row_counts_tidy()} counter rows folded away"
