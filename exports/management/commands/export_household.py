"""python manage.py export_household --email E FILE: the household's archive, as the API's
export writes it (docs/decisions.md "Export and restore")."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exports.management.commands._progress import ProgressLines
from exports.services import household_archive_write
from finance.models import User


class Command(BaseCommand):
    help = "Export a household's whole data (the household of the user with this email) to FILE."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="where to write the archive (a .zip)")
        parser.add_argument("--email", required=True, help="a user of the household")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(email__iexact=options["email"]).select_related("family").first()
        if user is None or user.family is None:
            raise CommandError(f"No household user with the email {options['email']}.")
        target = Path(options["file"]).resolve()
        if not target.parent.is_dir():
            raise CommandError(f"{target.parent} is not a directory.")
        handle, temp = tempfile.mkstemp(prefix=".export-", suffix=".zip", dir=target.parent)
        os.close(handle)
        try:
            summary = household_archive_write(
                family=user.family, path=Path(temp), progress=ProgressLines(self.stdout, "exported")
            )
            os.replace(temp, target)
        finally:
            Path(temp).unlink(missing_ok=True)
        counts = ", ".join(f"{n} {kind}" for kind, n in summary.kind_counts().items() if n)
        self.stdout.write(f"Wrote {target} ({summary.size_bytes:,} bytes): {counts}\n")
