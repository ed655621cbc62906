"""`python manage.py import_bench --rows N [--format csv|camt053|ofx]`: generate an N-row bank
file (CSV by default), then upload/parse,
publish and verify it into a fresh household, printing rows per second per phase and the
process's peak memory (RSS). Used for the 1,000,000-row figure (issue 5 item 9)."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import resource
import sys
import tempfile
import time
from typing import Any

from django.core.management.base import BaseCommand

from finance.models import Account, Family
from imports.bench_files import write_camt053, write_ofx
from imports.models import Import
from imports.services.parse import import_create
from imports.services.publish import import_publish, import_publish_run


def write_csv(path: str, rows: int, seed: int = 5) -> None:
    """A European-style export: semicolons, dd.mm.yyyy, 1.234,56, some identical rows."""
    rng = random.Random(seed)
    names = [f"Shop {i}" for i in range(500)] + ["Kaffee", "Miete", "Gehalt"]
    start = dt.date(2015, 1, 1)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("Buchungstag;Verwendungszweck;Betrag;Kategorie\r\n")
        for i in range(rows):
            day = start + dt.timedelta(days=i * 3650 // max(rows, 1))
            cents = rng.randint(-250000, 50000)
            whole, frac = divmod(abs(cents), 100)
            amount = f"{'-' if cents < 0 else ''}{whole:,}".replace(",", ".") + f",{frac:02d}"
            name = rng.choice(names)
            category = ("Lebensmittel", "Wohnen", "Freizeit", "")[i % 4]
            fh.write(f"{day:%d.%m.%Y};{name};{amount};{category}\r\n")


CSV_CONFIGURATION = {
    "date_col_label": "Buchungstag",
    "name_col_label": "Verwendungszweck",
    "amount_col_label": "Betrag",
    "category_col_label": "Kategorie",
    "date_format": "%d.%m.%Y",
    "number_format": "1.234,56",
}
TYPES = {
    "csv": Import.Type.TRANSACTION,
    "camt053": Import.Type.CAMT053,
    "ofx": Import.Type.OFX,
}


def peak_rss_mb() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


class Command(BaseCommand):
    help = "Benchmark a CSV import of --rows rows (parse, publish, verify) and print peak RSS."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--rows", type=int, default=100_000)
        parser.add_argument("--json", help="also write the figures to this JSON file")
        parser.add_argument(
            "--format", choices=("csv", "camt053", "ofx"), default="csv", help="the file's format"
        )
        parser.add_argument("--parse-only", action="store_true", help="upload and parse only")

    def handle(self, *args: Any, **options: Any) -> None:
        rows = options["rows"]
        family = Family.objects.create(name=f"bench {time.time():.0f}", currency="EUR")
        account = Account.objects.create(family=family, name="Girokonto", currency="EUR")
        with tempfile.TemporaryDirectory() as tmp:
            kind = options["format"]
            path = os.path.join(tmp, f"bench.{kind}")
            t0 = time.monotonic()
            {"csv": write_csv, "camt053": write_camt053, "ofx": write_ofx}[kind](path, rows)
            size = os.path.getsize(path)
            t1 = time.monotonic()
            with open(path, "rb") as stream:
                imp = import_create(
                    family=family,
                    stream=stream,
                    filename=f"bench.{kind}",
                    size=size,
                    account=account,
                    configuration=CSV_CONFIGURATION if kind == "csv" else {},
                    import_type=TYPES[kind],
                )
            t2 = time.monotonic()
        result = "matched"
        if not options["parse_only"]:
            import_publish(data_import=imp, enqueue=False)
            result = import_publish_run(import_id=imp.pk)
        t3 = time.monotonic()
        imp = Import.objects.get(pk=imp.pk)
        figures = {
            "format": options["format"],
            "rows": rows,
            "file_mb": round(size / 1e6, 1),
            "parse_seconds": round(t2 - t1, 1),
            "parse_rows_per_second": round(rows / max(t2 - t1, 1e-9)),
            "publish_verify_seconds": round(t3 - t2, 1),
            "publish_rows_per_second": round(rows / max(t3 - t2, 1e-9)),
            "generate_seconds": round(t1 - t0, 1),
            "status": imp.status,
            "readback": imp.verification["readback"]["status"],
            "invalid_rows": imp.stats.get("invalid_rows_count"),
            "error": imp.error or None,
            "peak_rss_mb": round(peak_rss_mb(), 1),
        }
        self.stdout.write(json.dumps(figures, indent=2))
        if options.get("json"):
            with open(options["json"], "w") as fh:
                json.dump(figures, fh, indent=2)
        if result != "matched":
            self.stderr.write(f"publish ended {result}: {imp.error}")
