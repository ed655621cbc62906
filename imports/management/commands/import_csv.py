"""`python manage.py import_csv FILE --account ID [config options]`: upload, parse, publish and
verify a CSV from the shell, with progress on stderr."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.errors import ApplicationError
from finance.models import Account
from imports.services.config import CONFIG_KEYS
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


class Command(BaseCommand):
    help = "Import a CSV of transactions into an account: parse, publish, verify."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file")
        parser.add_argument("--account", required=True, help="ledger account id")
        for key in CONFIG_KEYS:
            parser.add_argument(f"--{key.replace('_', '-')}", dest=key)
        parser.add_argument("--no-publish", action="store_true", help="parse only")

    def handle(self, *args: Any, **options: Any) -> None:
        account = Account.objects.select_related("family").filter(pk=options["account"]).first()
        if account is None:
            raise CommandError(f"no account with id {options['account']}")
        path = options["file"]
        if not os.path.isfile(path):
            raise CommandError(f"no such file: {path}")
        config = {k: options[k] for k in CONFIG_KEYS if options.get(k) is not None}
        parse_bar = Progress("parse")
        try:
            with open(path, "rb") as stream:
                imp = import_create(
                    family=account.family,
                    stream=stream,
                    filename=os.path.basename(path),
                    size=os.path.getsize(path),
                    account=account,
                    configuration=config,
                    on_progress=parse_bar,
                )
        except ApplicationError as exc:
            raise CommandError("; ".join(exc.errors or [exc.message])) from None
        parse_seconds = parse_bar.finish()
        stats = imp.stats
        self.stdout.write(
            f"import {imp.pk}: {stats['rows_count']} rows, {stats['invalid_rows_count']} invalid, "
            f"{stats['duplicates_count']} duplicates, parsed in {parse_seconds:.1f}s"
        )
        if options["no_publish"]:
            return
        blockers = import_blockers(data_import=imp)
        if blockers:
            raise CommandError("not publishable: " + "; ".join(blockers))
        import_publish(data_import=imp, enqueue=False)
        publish_bar = Progress("publish", stats["rows_to_create"])
        result = import_publish_run(import_id=imp.pk, on_progress=publish_bar)
        publish_seconds = publish_bar.finish()
        imp.refresh_from_db()
        readback = imp.verification.get("readback", {})
        self.stdout.write(
            f"publish: {imp.status} in {publish_seconds:.1f}s, readback {readback.get('status')}"
            + (f", error: {imp.error}" if imp.error else "")
        )
        if result not in ("matched",):
            raise CommandError(f"publish ended {result}")
