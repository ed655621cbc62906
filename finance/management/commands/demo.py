"""Create the demo household for `make run` and print a working key and curl line."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from finance.demo_data import demo_seed
from finance.services.api_keys import api_key_create, household_user_ensure

DEMO_EMAIL = "demo@example.com"
DEMO_PASSWORD = "demo-password"


class Command(BaseCommand):
    help = (
        "Ensure the demo household exists (with a year of activity unless DEMO_DATA=false) "
        "and print a fresh API key for it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args: object, base_url: str, **options: object) -> None:
        user = household_user_ensure(
            email=DEMO_EMAIL, family_name="Demo household", password=DEMO_PASSWORD
        )
        if settings.DEMO_DATA and demo_seed(family=user.family):
            self.stdout.write("Demo household filled with a year of accounts and transactions.")
        _, raw = api_key_create(user=user, name="make run demo key")
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "Demo household ready.",
                    f"  Admin:   {base_url}/admin/  (login {DEMO_EMAIL} / {DEMO_PASSWORD})",
                    f"  API key: {raw}",
                    f"  Try:     curl -s -H 'X-Api-Key: {raw}' {base_url}/api/v1/transactions",
                    f"  Docs:    {base_url}/api/v1/docs",
                    "",
                ]
            )
        )
