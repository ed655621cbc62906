"""`python manage.py import_file FILE --account ID` or `--map STATEMENT_ACCOUNT=ACCOUNT_ID`
(repeated, one per statement account of the file): upload, parse, map, publish and verify a
bank file of any format (CSV, OFX/QFX, QIF, CAMT.053, MT940), with progress on stderr."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.errors import ApplicationError
from finance.models import Account
from imports.models import Import, ImportMapping
from imports.services.config import CONFIG_KEYS
from imports.services.formats import import_type_detect
from imports.services.mappings import import_mappings_update
from imports.services.parse import import_create
from imports.services.publish import import_blockers, import_publish, import_publish_run


class Progress:
    """A plain-text progress line on stderr (rows and rows per second)."""

    def __init__(self, label: str, total: int | None = None, stream: Any = None) -> None:
        self.label, self.total, self.start, self.last = label, total, time.monotonic(), 0.0
        self.stream = stream or sys.stderr

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.5 and done != self.total:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-6)
        if self.total:
            width = 30
            filled = int(width * done / self.total)
            bar = "#" * filled + "-" * (width - filled)
            line = f"\r{self.label} [{bar}] {done}/{self.total} rows ({rate:,.0f}/s)"
        else:
            line = f"\r{self.label} {done} rows ({rate:,.0f}/s)"
        self.stream.write(line)
        self.stream.flush()

    def finish(self) -> float:
        self.stream.write("\n")
        return time.monotonic() - self.start


def config_arguments(parser: Any) -> None:
    """The import's configuration options and --no-publish (import_file and import_csv)."""
    for key in CONFIG_KEYS:
        parser.add_argument(f"--{key.replace('_', '-')}", dest=key)
    parser.add_argument("--no-publish", action="store_true", help="parse (and map) only")


class Command(BaseCommand):
    help = "Import a bank file (CSV, OFX/QFX, QIF, CAMT.053, MT940): parse, map, publish, verify."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file")
        parser.add_argument("--account", help="ledger account id every row goes to")
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="STATEMENT_ACCOUNT=ACCOUNT_ID",
            help="the ledger account of one statement account (number or IBAN) of the file",
        )
        parser.add_argument(
            "--type", choices=Import.Type.values, help="the format (default: recognised)"
        )
        config_arguments(parser)

    def _accounts(self, options: dict[str, Any]) -> tuple[Account | None, dict[str, Account]]:
        if bool(options["account"]) == bool(options["map"]):
            raise CommandError("give either --account ID or one --map per statement account")
        fixed = None
        if options["account"]:
            fixed = Account.objects.select_related("family").filter(pk=options["account"]).first()
            if fixed is None:
                raise CommandError(f"no account with id {options['account']}")
        mapped: dict[str, Account] = {}
        for item in options["map"]:
            value, sep, account_id = item.rpartition("=")
            account = Account.objects.select_related("family").filter(pk=account_id).first()
            if not sep or not value or account is None:
                raise CommandError(f"--map {item!r}: expected STATEMENT_ACCOUNT=ACCOUNT_ID")
            mapped[value] = account
        families = {a.family_id for a in mapped.values()}
        if len(families) > 1:
            raise CommandError("the --map accounts belong to different households")
        return fixed, mapped

    def handle(self, *args: Any, **options: Any) -> None:
        fixed, mapped = self._accounts(options)
        path = options["file"]
        if not os.path.isfile(path):
            raise CommandError(f"no such file: {path}")
        family = fixed.family if fixed else next(iter(mapped.values())).family
        config = {k: options[k] for k in CONFIG_KEYS if options.get(k) is not None}
        parse_bar = Progress("parse", stream=self.stderr._out)
        try:
            with open(path, "rb") as stream:
                import_type = options["type"] or import_type_detect(stream, os.path.basename(path))
                imp = import_create(
                    family=family,
                    stream=stream,
                    filename=os.path.basename(path),
                    size=os.path.getsize(path),
                    account=fixed,
                    configuration=config,
                    on_progress=parse_bar,
                    import_type=import_type,
                )
        except ApplicationError as exc:
            raise CommandError("; ".join(exc.errors or [exc.message])) from None
        seconds = parse_bar.finish()
        if imp.status == Import.Status.FAILED:
            raise CommandError(f"import {imp.pk} ({import_type}) failed: {imp.error}")
        if mapped:
            self._map(imp, mapped)
            imp.refresh_from_db()
        stats = imp.stats
        self.stdout.write(
            f"import {imp.pk} ({import_type}): {stats['rows_count']} rows, "
            f"{stats['invalid_rows_count']} invalid, {stats['duplicates_count']} duplicates, "
            f"parsed in {seconds:.1f}s"
        )
        if options["no_publish"]:
            return
        blockers = import_blockers(data_import=imp)
        if blockers:
            raise CommandError("not publishable: " + "; ".join(blockers))
        import_publish(data_import=imp, enqueue=False)
        publish_bar = Progress("publish", stats["rows_to_create"], stream=self.stderr._out)
        result = import_publish_run(import_id=imp.pk, on_progress=publish_bar)
        publish_seconds = publish_bar.finish()
        imp.refresh_from_db()
        readback = imp.verification.get("readback", {})
        self.stdout.write(
            f"publish: {imp.status} in {publish_seconds:.1f}s, readback {readback.get('status')}"
            + (f", error: {imp.error}" if imp.error else "")
        )
        for check in readback.get("statements") or []:
            self.stdout.write(
                f"statement {check['number']} {check['account']}: {check['status']} "
                f"(opening {check['opening_balance']}, entries {check['entries_total']}, "
                f"closing {check['closing_balance']})"
            )
        for change in imp.balances_set or []:
            self.stdout.write(
                f"account {change['account_id']}: reported balance {change['balance']} "
                f"as of {change['at'][:10]}"
            )
        if result != "matched":
            raise CommandError(f"publish ended {result}")

    def _map(self, imp: Import, mapped: dict[str, Account]) -> None:
        values = set(
            ImportMapping.objects.filter(data_import=imp, kind="account").values_list(
                "value", flat=True
            )
        )
        unknown = sorted(set(mapped) - values)
        if unknown:
            raise CommandError(
                f"import {imp.pk}: the file has no statement account {', '.join(unknown)}; "
                f"its accounts are {', '.join(sorted(values)) or '(none)'}"
            )
        if any(a.family_id != imp.family_id for a in mapped.values()):
            raise CommandError("a --map account belongs to another household")
        import_mappings_update(
            data_import=imp,
            items=[
                {"kind": "account", "value": value, "target_id": account.pk}
                for value, account in mapped.items()
            ],
        )
