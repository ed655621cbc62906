"""list: GET /api/v1/transactions?per_page=100 at a small and a large household, same database.

Requests go through the whole Django stack in-process (middleware, auth, throttling,
serializers) without a socket, so the figures are the server's time, not the client's."""

from __future__ import annotations

import time
from typing import Any

from bench.common import (
    Report,
    explain,
    household_create,
    latency_summary,
    percentile,
    seed_transactions,
)

TARGET_P99_RATIO = 1.5

# Indexes proposed to the ledger owner (docs/decisions.md); BENCH_PROPOSED_INDEXES=1 adds them
# to the bench database so their effect can be measured before a migration is written.
PROPOSED_INDEXES = {
    "bench_txn_family_order": '("family_id", "date" DESC, "created_at" DESC, "id" DESC)',
    "bench_txn_family_category_order": (
        '("family_id", "category_id", "date" DESC, "created_at" DESC, "id" DESC)'
    ),
    "bench_txn_family_account_order": (
        '("family_id", "account_id", "date" DESC, "created_at" DESC, "id" DESC)'
    ),
    "bench_txn_family_amount": '("family_id", "amount")',
}


def proposed_indexes_create() -> list[str]:
    from django.db import connection

    from finance.models import Transaction

    table = Transaction._meta.db_table
    with connection.cursor() as cur:
        for name, columns in PROPOSED_INDEXES.items():
            cur.execute(f'CREATE INDEX "{name}" ON "{table}" {columns}')
    return list(PROPOSED_INDEXES)


def scenarios(hh: Any) -> list[tuple[str, dict[str, str]]]:
    return [
        ("no filter", {}),
        ("account_id", {"account_id": str(hh.accounts[1].pk)}),
        ("date range 90d", {"start_date": "2025-09-01", "end_date": "2025-11-30"}),
        ("category_id", {"category_id": str(hh.categories[2].pk)}),
        ("type=income", {"type": "income"}),
        ("type=expense", {"type": "expense"}),
        ("tag_ids[]", {"tag_ids[]": str(hh.tags[3].pk)}),
        ("search", {"search": "coffee 12"}),
        ("page 20", {"page": "20"}),
    ]


def measure(
    client: Any, key: str, params: dict[str, str], reps: int, budget_s: float = 60.0
) -> list[float]:
    """`reps` timed requests after 3 warm-ups; stops early (keeping at least 5) past `budget_s`."""
    samples: list[float] = []
    query = {"per_page": "100", **params}
    began = time.perf_counter()
    for i in range(reps + 3):
        start = time.perf_counter()
        r = client.get("/api/v1/transactions", query, HTTP_X_API_KEY=key)
        elapsed = time.perf_counter() - start
        assert r.status_code == 200, (r.status_code, r.content[:300])
        if i >= 3:  # warm-up
            samples.append(elapsed)
        if len(samples) >= 5 and time.perf_counter() - began > budget_s:
            break
    return samples


def plans(client: Any, key: str, params: dict[str, str]) -> list[dict[str, Any]]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        client.get("/api/v1/transactions", {"per_page": "100", **params}, HTTP_X_API_KEY=key)
    out = []
    for q in ctx.captured_queries:
        sql = q["sql"]
        if "finance_transaction" not in sql or not sql.lstrip().upper().startswith("SELECT"):
            continue
        out.append({"sql": sql[:600], "ms": q["time"], "plan": explain(sql)})
    return out


def run(*, full: bool, backend: str) -> Report:
    from django.test import Client

    small_n = 10_000
    large_n = 1_000_000 if full else 100_000
    reps = 50 if full else 15
    report = Report("list", backend, full)
    import os

    extra_indexes = (
        proposed_indexes_create() if os.environ.get("BENCH_PROPOSED_INDEXES") == "1" else []
    )
    if extra_indexes:
        report.workload = "list-proposed-indexes"
        print(f"with proposed indexes: {', '.join(extra_indexes)}")
    small = household_create("small")
    large = household_create("large")
    seeded = {}
    for hh, n in ((small, small_n), (large, large_n)):
        seconds = seed_transactions(hh, n)
        seeded[n] = {"seconds": round(seconds, 1), "rows_per_s": round(n / seconds)}
        print(f"seeded {n} rows in {seconds:.1f}s ({n / seconds:,.0f} rows/s)", flush=True)
    client = Client()
    explained = {}
    for name, params in scenarios(small):
        s = measure(client, small.key, params, reps)
        large_params = dict(scenarios(large))[name]
        big = measure(client, large.key, large_params, reps)
        s_sum, b_sum = latency_summary(s), latency_summary(big)
        ratio99 = percentile(big, 99) / percentile(s, 99)
        report.add(
            scenario=name,
            small_p50_ms=s_sum["p50_ms"],
            small_p99_ms=s_sum["p99_ms"],
            large_p50_ms=b_sum["p50_ms"],
            large_p99_ms=b_sum["p99_ms"],
            p50_ratio=round(percentile(big, 50) / percentile(s, 50), 2),
            p99_ratio=round(ratio99, 2),
            target=f"<= {TARGET_P99_RATIO}",
            met="yes" if ratio99 <= TARGET_P99_RATIO else "NO",
        )
        explained[name] = plans(client, large.key, large_params)
    report.extra = {
        "sizes": {"small": small_n, "large": large_n},
        "proposed_indexes": extra_indexes,
        "seed": seeded,
        "reps": reps,
        "plans_large": explained,
        "note": "in-process Django test client; ms per request",
    }
    report.print_table(
        [
            "scenario", "small_p50_ms", "small_p99_ms", "large_p50_ms", "large_p99_ms",
            "p50_ratio", "p99_ratio", "target", "met",
        ]
    )  # fmt: skip
    print(f"(small = {small_n:,} rows, large = {large_n:,} rows, {reps} requests each)")
    return report
