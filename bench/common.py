"""Shared bench helpers: Django setup, households, fast seeding, timing and reporting.

Workloads run in a child process whose environment already names the database
(DATABASE_URL for PostgreSQL, SQLITE_PATH for SQLite); see bench/run.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import resource
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
RESULTS_DIR = BASE_DIR / "bench" / "results"


def django_setup() -> None:
    if str(BASE_DIR) not in sys.path:
        sys.path.insert(0, str(BASE_DIR))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    import django

    django.setup()


def vendor() -> str:
    from django.db import connection

    return connection.vendor


# --- Timing ----------------------------------------------------------------------------------


def percentile(samples: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (p99 of 50 samples is the largest but none)."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), round(pct / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def latency_summary(samples: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(samples),
        "p50_ms": ms(percentile(samples, 50)),
        "p99_ms": ms(percentile(samples, 99)),
        "mean_ms": ms(statistics.fmean(samples)) if samples else float("nan"),
    }


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# --- Reporting -------------------------------------------------------------------------------


@dataclass
class Report:
    workload: str
    backend: str
    full: bool
    rows: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, **row: Any) -> None:
        self.rows.append(row)

    def print_table(self, columns: Sequence[str]) -> None:
        print(f"\n== {self.workload} on {self.backend} ({'full' if self.full else 'quick'}) ==")
        table = [[str(row.get(c, "")) for c in columns] for row in self.rows]
        widths = [max([len(c)] + [len(r[i]) for r in table]) for i, c in enumerate(columns)]
        print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
        for r in table:
            print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)))
        sys.stdout.flush()

    def write(self) -> Path:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        path = RESULTS_DIR / f"{self.workload}-{self.backend}.json"
        body = {
            "workload": self.workload,
            "backend": self.backend,
            "mode": "full" if self.full else "quick",
            "measured_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "cpu_count": os.cpu_count(),
            "rows": self.rows,
            **self.extra,
        }
        path.write_text(json.dumps(body, indent=2, default=str))
        return path


# --- Households ------------------------------------------------------------------------------


@dataclass
class BenchHousehold:
    family: Any
    key: str
    accounts: list[Any]
    categories: list[Any]
    merchants: list[Any]
    tags: list[Any]


def household_create(name: str, *, accounts: int = 5, categories: int = 20) -> BenchHousehold:
    from finance.models import Account, ApiKey, Category, Merchant, Tag
    from finance.services.api_keys import api_key_create, household_user_ensure

    user = household_user_ensure(email=f"{name}-{uuid.uuid4().hex[:8]}@bench.local")
    family = user.family
    _, key = api_key_create(user=user, name="bench", scope=ApiKey.SCOPE_READ_WRITE)
    return BenchHousehold(
        family=family,
        key=key,
        accounts=[
            Account.objects.create(family=family, name=f"Account {i}", currency="USD")
            for i in range(accounts)
        ],
        categories=[
            Category.objects.create(family=family, name=f"Category {i}") for i in range(categories)
        ],
        merchants=[Merchant.objects.create(family=family, name=f"Merchant {i}") for i in range(50)],
        tags=[Tag.objects.create(family=family, name=f"tag-{i}") for i in range(10)],
    )


# --- Fast seeding: COPY on PostgreSQL, executemany on SQLite ------------------------------------

WORDS = ["Coffee", "Groceries", "Rent", "Fuel", "Salary", "Pharmacy", "Books", "Taxi", "Lunch"]


def constant_defaults(model: Any, columns: Iterable[str]) -> dict[str, Any]:
    """DB values for columns a seeder does not generate (fields other branches may add)."""
    from django.db import connection

    out = {}
    for f in model._meta.concrete_fields:
        if f.column in columns:
            continue
        value = f.get_db_prep_save(f.get_default(), connection)
        out[f.column] = value
    return out


def transaction_rows(
    hh: BenchHousehold, count: int, *, start: dt.date | None = None, seed: int = 7
) -> Iterable[dict[str, Any]]:
    """Realistic-looking ledger rows: ten years of dates, a few accounts, categories, merchants."""
    rng = random.Random(seed)
    start = start or dt.date(2016, 1, 1)
    span = 3650
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    for i in range(count):
        day = start + dt.timedelta(days=rng.randrange(span))
        # The ledger's sign (decisions.md): positive is money out. Four rows in five are
        # spending, one in five is income, as in a real current account.
        amount = rng.randrange(-50000, 200000) / 100
        yield {
            "id": uuid.uuid4(),
            "account": hh.accounts[i % len(hh.accounts)],
            "date": day,
            # Four places: on SQLite the column holds this canonical text (core/exact.py).
            "amount": f"{amount:.4f}",
            "name": f"{rng.choice(WORDS)} {i % 997}",
            "category": hh.categories[i % len(hh.categories)] if i % 3 else None,
            "merchant": hh.merchants[i % len(hh.merchants)] if i % 2 else None,
            "external_id": f"seed-{i}",
            "created_at": now + dt.timedelta(microseconds=i),
            "tag": hh.tags[(i // 10) % len(hh.tags)] if i % 10 == 0 else None,
        }


def seed_transactions(hh: BenchHousehold, count: int, *, batch: int = 50_000) -> float:
    """Insert `count` rows for the household as fast as the database takes them; seconds."""
    from django.db import connection

    from finance.models import Transaction

    through = Transaction.tags.through
    pg = connection.vendor == "postgresql"
    generated = [
        "id", "family_id", "account_id", "date", "amount", "currency", "name", "notes",
        "external_id", "source", "category_id", "merchant_id", "created_at", "updated_at",
    ]  # fmt: skip
    constants = constant_defaults(Transaction, generated)
    columns = generated + list(constants)
    table = Transaction._meta.db_table
    through_table = through._meta.db_table
    through_cols = [
        through._meta.get_field("transaction").column,
        through._meta.get_field("tag").column,
    ]

    def ident(x: Any) -> str:
        return str(x.pk) if pg else x.pk.hex

    def stamp(t: dt.datetime) -> str:
        return t.isoformat() if pg else t.strftime("%Y-%m-%d %H:%M:%S.%f")

    family_id = str(hh.family.pk) if pg else hh.family.pk.hex
    const_values = list(constants.values())
    start = time.perf_counter()
    rows: list[tuple] = []
    tag_rows: list[tuple] = []

    def flush() -> None:
        if not rows:
            return
        with connection.cursor() as cur:
            if pg:
                raw = cur.cursor
                with raw.copy(f'COPY "{table}" ({", ".join(columns)}) FROM STDIN') as copy:
                    for r in rows:
                        copy.write_row(r)
                if tag_rows:
                    with raw.copy(
                        f'COPY "{through_table}" ({", ".join(through_cols)}) FROM STDIN'
                    ) as copy:
                        for r in tag_rows:
                            copy.write_row(r)
            else:
                marks = ", ".join("?" * len(columns))
                cur.executemany(
                    f'INSERT INTO "{table}" ({", ".join(columns)}) VALUES ({marks})', rows
                )
                if tag_rows:
                    cur.executemany(
                        f'INSERT INTO "{through_table}" ({", ".join(through_cols)}) VALUES (?, ?)',
                        tag_rows,
                    )
        rows.clear()
        tag_rows.clear()

    from django.db import transaction as db_transaction

    if not pg:  # seeding only: a cache big enough for the random-key index inserts
        with connection.cursor() as cur:
            cur.execute("PRAGMA cache_size")
            default_cache = cur.fetchone()[0]
            cur.execute("PRAGMA cache_size=-262144")
    with db_transaction.atomic():
        for r in transaction_rows(hh, count):
            tid = str(r["id"]) if pg else r["id"].hex
            created = stamp(r["created_at"])
            rows.append(
                (
                    tid, family_id, ident(r["account"]), r["date"].isoformat(), r["amount"], "USD",
                    r["name"], None, r["external_id"], "bench",
                    ident(r["category"]) if r["category"] else None,
                    ident(r["merchant"]) if r["merchant"] else None,
                    created, created, *const_values,
                )
            )  # fmt: skip
            if r["tag"] is not None:
                tag_rows.append((tid, ident(r["tag"])))
            if len(rows) >= batch:
                flush()
        flush()
    if not pg:
        with connection.cursor() as cur:
            cur.execute(f"PRAGMA cache_size={default_cache}")
    analyze()
    return time.perf_counter() - start


def analyze() -> None:
    from django.db import connection

    if connection.vendor == "postgresql":
        from finance.models import Transaction

        with connection.cursor() as cur:
            # VACUUM keeps the visibility map fresh so counts can be index-only scans.
            cur.execute(f'VACUUM ANALYZE "{Transaction._meta.db_table}"')
            cur.execute(f'VACUUM ANALYZE "{Transaction.tags.through._meta.db_table}"')
            # Trades, imports and counters are seeded in one go too: autovacuum would analyze
            # them minutes later; without it the planner takes 10,000 trades for 10.
            cur.execute("ANALYZE")
    else:
        with connection.cursor() as cur:
            cur.execute("ANALYZE")


def explain(sql: str) -> list[str]:
    from django.db import connection

    prefix = (
        "EXPLAIN (ANALYZE, BUFFERS)" if connection.vendor == "postgresql" else "EXPLAIN QUERY PLAN"
    )
    with connection.cursor() as cur:
        cur.execute(f"{prefix} {sql}")
        return [" | ".join(str(c) for c in row) for row in cur.fetchall()]
