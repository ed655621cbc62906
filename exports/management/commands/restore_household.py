"""python manage.py restore_household FILE --email E: an export archive restored into the
household of the user with this email, both created when missing (the household must have
no accounts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from core.errors import ApplicationError
from exports.management.commands._progress import ProgressLines
from exports.models import Restore
from exports.reader import archive_open
from exports.services import restore_from_file
from finance.models import Family, User


class Command(BaseCommand):
    help = "Restore an export archive into the household of the user with this email."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="an archive made by an export")
        parser.add_argument(
            "--email", required=True, help="the household's user (created if missing)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"{path} is not a file.")
        try:
            with archive_open(path) as archive:
                household = archive.manifest.get("household") or {}
                currency = archive.manifest["currency"]
                zone = str(household.get("timezone") or "UTC")
        except ApplicationError as exc:
            raise CommandError("; ".join(exc.errors or [exc.message])) from None
        name = str(household.get("name") or "Restored household")
        user = self._user(options["email"], name, currency, zone)
        try:
            restore = restore_from_file(
                family=user.family, path=path, progress=ProgressLines(self.stdout, "restored")
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        readback = json.dumps(restore.readback, indent=2) if restore.readback else ""
        if restore.status != Restore.Status.COMPLETE:
            raise CommandError(f"Restore failed, nothing was kept: {restore.error}\n{readback}")
        self.stdout.write(f"Restored into {user.family} ({user.email}); readback:\n{readback}\n")

    @transaction.atomic
    def _user(self, email: str, name: str, currency: str, zone: str) -> User:
        user = User.objects.filter(email__iexact=email).select_related("family").first()
        if user is None:
            family = Family.objects.create(name=name[:255], currency=currency, timezone=zone)
            user = User.objects.create_user(email=email, family=family)
            self.stdout.write(f"Created the household {family} and its user {user.email}.\n")
        elif user.family is None:
            raise CommandError(f"{email} belongs to no household (an operator account).")
        return user
