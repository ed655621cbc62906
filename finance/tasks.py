"""Celery tasks: thin, call one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="finance.tidy_row_counts", expires=600)
def row_counts_tidy_task() -> str:
    from finance.ledger import row_counts_tidy

    return f"{row_counts_tidy()} counter rows folded away"


@shared_task(name="finance.fetch_exchange_rates", expires=3600)
def exchange_rates_fetch_task(history: bool = False) -> str:
    """System exchange rates from the provider FX_PROVIDER names (beat: daily)."""
    import logging

    from django.conf import settings

    from finance.fx.fetch import exchange_rates_fetch
    from providers.types import ProviderError

    if settings.FX_PROVIDER != "ecb":
        return f"exchange rates: FX_PROVIDER is {settings.FX_PROVIDER!r}, nothing fetched"
    try:
        result = exchange_rates_fetch(history=history)
    except ProviderError as exc:
        # The next run fetches the 90-day file and fills the gap; a day's rate stays usable
        # for 7 days meanwhile.
        logging.getLogger("finance.fx").warning("exchange rates not fetched: %s", exc.user_message)
        return f"exchange rates not fetched: {exc.user_message}"
    return f"exchange rates: {result.summary()}"


@shared_task(name="finance.rule_run")
def rule_run_task(run_id: str) -> str:
    from finance.services.rules import rule_run_execute

    run = rule_run_execute(run_id=run_id)
    if run is None:
        return "no such run"
    return f"{run.status}: {run.matched} matched, {run.changed} changed"
