"""python manage.py ledger_check [--household EMAIL] [--fix]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from finance.ledger import ledger_check
from finance.models import Family, User


class Command(BaseCommand):
    help = (
        "Re-derive balances, transfer suggestions, row counters and the search index from the "
        "ledger's rows and report any difference (--fix repairs them)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--household", metavar="EMAIL", help="only this user's household")
        parser.add_argument("--fix", action="store_true", help="repair what differs")

    def handle(self, *args: Any, **options: Any) -> None:
        families = Family.objects.order_by("name")
        if options["household"]:
            user = User.objects.filter(email__iexact=options["household"]).first()
            if user is None or user.family_id is None:
                raise CommandError(f"No household for {options['household']!r}.")
            families = families.filter(pk=user.family_id)
        differences = 0
        for family in families:
            report = ledger_check(family=family, fix=options["fix"])
            for problem in report.problems:
                self.stdout.write(f"{report.family}: {problem}")
            differences += len(report.problems)
            if report.fixed:
                self.stdout.write(f"{report.family}: repaired")
        if differences and not options["fix"]:
            raise CommandError(f"{differences} difference(s) found; run with --fix to repair.")
        self.stdout.write(self.style.SUCCESS(f"{differences} difference(s)."))
