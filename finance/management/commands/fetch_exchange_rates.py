"""Fetch the European Central Bank's euro reference rates now, as beat does daily."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from finance.fx.fetch import exchange_rates_fetch
from providers.types import ProviderError


class Command(BaseCommand):
    help = (
        "Fetch system exchange rates from the European Central Bank (FX_BASE_URL): the daily "
        "file, or the 90-day file when stored rates have a gap; --history: every day since 1999."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--history", action="store_true", help="the whole history file (about 7,000 days)"
        )

    def handle(self, *args: object, history: bool, **options: object) -> None:
        try:
            result = exchange_rates_fetch(history=history)
        except ProviderError as exc:
            raise CommandError(exc.user_message) from None
        self.stdout.write(result.summary())
