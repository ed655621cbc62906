"""`python manage.py import_csv FILE --account ID [config options]`: upload, parse, publish and
verify a CSV from the shell, with progress on stderr. `import_file` with one account and the
CSV type (no format recognition, no --map)."""

from __future__ import annotations

from typing import Any

from imports.management.commands import import_file
from imports.models import Import


class Command(import_file.Command):
    help = "Import a CSV of transactions into an account: parse, publish, verify."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file")
        parser.add_argument("--account", required=True, help="ledger account id")
        import_file.config_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        super().handle(*args, **{**options, "map": [], "type": Import.Type.TRANSACTION})
