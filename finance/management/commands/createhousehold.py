from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from finance.currencies import is_currency
from finance.services.api_keys import household_user_ensure


class Command(BaseCommand):
    help = "Create a household and its admin user (or set the password of an existing user)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True)
        parser.add_argument("--password", required=True)
        parser.add_argument("--name", default=None)
        parser.add_argument("--currency", default="USD")

    def handle(
        self,
        *args: object,
        email: str,
        password: str,
        name: str | None,
        currency: str,
        **options: object,
    ) -> None:
        currency = currency.upper()
        if not is_currency(currency):
            raise CommandError(f"{currency!r} is not an ISO 4217 currency code")
        user = household_user_ensure(
            email=email, family_name=name, currency=currency, password=password
        )
        self.stdout.write(f"Household {user.family.name!r} with admin user {user.email}")
