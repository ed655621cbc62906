"""Celery tasks: thin, call one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="finance.tidy_row_counts", expires=600)
def row_counts_tidy_task() -> str:
    from finance.ledger import row_counts_tidy

    return f"{row_counts_tidy()} counter rows folded away"


@shared_task(name="finance.rule_run")
def rule_run_task(run_id: str) -> str:
    from finance.services.rules import rule_run_execute

    run = rule_run_execute(run_id=run_id)
    if run is None:
        return "no such run"
    return f"{run.status}: {run.matched} matched, {run.changed} changed"
