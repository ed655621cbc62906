from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from finance.models import ApiKey
from finance.services.api_keys import api_key_create, household_user_ensure


class Command(BaseCommand):
    help = "Create an API key (and the user and household when missing); prints the key alone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True)
        parser.add_argument(
            "--scope",
            default=ApiKey.SCOPE_READ_WRITE,
            choices=[ApiKey.SCOPE_READ, ApiKey.SCOPE_READ_WRITE],
        )
        parser.add_argument("--name", default="API key")

    def handle(self, *args: object, email: str, scope: str, name: str, **options: object) -> None:
        if "@" not in email:
            raise CommandError(f"{email!r} is not an email address")
        user = household_user_ensure(email=email)
        _, raw = api_key_create(user=user, name=name, scope=scope)
        self.stdout.write(raw)
