"""list: GET /api/v1/transactions?per_page=100 (nine filters), /trades and /imports at a small
and a large household, same database (trades and imports grow with the ledger: bench/seed_extra).

Requests go through the whole Django stack in-process (middleware, auth, throttling,
serializers) without a socket, so the figures are the server's time, not the client's."""

from __future__ import annotations

import gc
import time
from typing import Any

from bench.common import (
    Report,
    analyze,
    explain,
    household_create,
    latency_summary,
    percentile,
    seed_transactions,
)
from bench.seed_extra import seed_trades_and_imports

TARGET_P99_RATIO = 1.5

TRANSACTIONS = "/api/v1/transactions"
CONTROL = "A/A: small vs itself"


def scenarios(hh: Any) -> list[tuple[str, str, dict[str, str]]]:
    """(name, path, query): the transaction list's filters, then the trade and import lists."""
    return [
        ("no filter", TRANSACTIONS, {}),
        ("account_id", TRANSACTIONS, {"account_id": str(hh.accounts[1].pk)}),
        ("date range 90d", TRANSACTIONS, {"start_date": "2025-09-01", "end_date": "2025-11-30"}),
        ("category_id", TRANSACTIONS, {"category_id": str(hh.categories[2].pk)}),
        ("type=income", TRANSACTIONS, {"type": "income"}),
        ("type=expense", TRANSACTIONS, {"type": "expense"}),
        ("tag_ids[]", TRANSACTIONS, {"tag_ids[]": str(hh.tags[3].pk)}),
        # A term with a full page in both households ("coffee 12" left the small one a short
        # page with no count to run, so its ratio compared different work).
        ("search", TRANSACTIONS, {"search": "coffee 1"}),
        ("page 20", TRANSACTIONS, {"page": "20"}),
        ("trades", "/api/v1/trades", {}),
        ("trades account_id", "/api/v1/trades", {"account_id": str(hh.accounts[1].pk)}),
        ("imports", "/api/v1/imports", {}),
    ]


Request = tuple[str, str, dict[str, str]]  # (api key, path, query)


def measure_pair(
    client: Any, small: Request, large: Request, reps: int, budget_s: float = 120.0
) -> tuple[list[float], list[float]]:
    """`reps` timed requests to each household after 3 warm-ups, interleaved (small, large, then
    large, small, ...) so that a burst of other work on a shared machine lands on both sides of
    the ratio, not on one; stops early (keeping at least 10 pairs) past `budget_s`.

    The collector runs before each pair, untimed: the test client leaves objects behind per
    request, so the oldest generation's collections came every ~22 pairs, at the same point
    of the alternation, and always landed on the same side (the large household's trades at
    pairs 18 and 40 of 50: p99 19-25 ms against 11-13, p50 equal). Their length does not
    depend on the household's size, which is what the ratio measures."""
    samples: tuple[list[float], list[float]] = ([], [])
    began = time.perf_counter()
    for i in range(reps + 3):
        gc.collect()
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for side in order:
            key, path, params = (small, large)[side]
            start = time.perf_counter()
            r = client.get(path, {"per_page": "100", **params}, HTTP_X_API_KEY=key)
            elapsed = time.perf_counter() - start
            assert r.status_code == 200, (r.status_code, r.content[:300])
            if i >= 3:  # warm-up
                samples[side].append(elapsed)
        if len(samples[0]) >= 10 and time.perf_counter() - began > budget_s:
            break
    return samples


def plans(client: Any, key: str, path: str, params: dict[str, str]) -> list[dict[str, Any]]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        client.get(path, {"per_page": "100", **params}, HTTP_X_API_KEY=key)
    out = []
    for q in ctx.captured_queries:
        sql = q["sql"]
        if not any(t in sql for t in ("finance_transaction", "trades_trade", "imports_import")):
            continue
        if not sql.lstrip().upper().startswith("SELECT"):
            continue
        out.append({"sql": sql[:600], "ms": q["time"], "plan": explain(sql)})
    return out


def run(*, full: bool, backend: str) -> Report:
    from django.test import Client

    small_n = 10_000
    large_n = 1_000_000 if full else 100_000
    reps = 200 if full else 50
    report = Report("list", backend, full)
    small = household_create("small")
    large = household_create("large")
    seeded = {}
    for hh, n in ((small, small_n), (large, large_n)):
        seconds = seed_transactions(hh, n)
        others = seed_trades_and_imports(hh, n)
        analyze()
        seeded[n] = {"seconds": round(seconds, 1), "rows_per_s": round(n / seconds), **others}
        print(
            f"seeded {n} rows in {seconds:.1f}s ({n / seconds:,.0f} rows/s), "
            f"{others['trades']:,} trades, {others['imports']:,} imports",
            flush=True,
        )
    explained = {}
    # As a server worker does (config/wsgi.py): views loaded and the heap frozen, here with
    # what the seeding left, so a collection during a timed request walks what requests leave.
    from config.warmup import heap_freeze

    heap_freeze()
    large_scenarios = {name: (path, params) for name, path, params in scenarios(large)}
    pairs = [
        (name, (small.key, path, params), (large.key, *large_scenarios[name]))
        for name, path, params in scenarios(small)
    ]
    # A/A control: the small household against itself. Its ratios are the machine's noise
    # (p99 over a few hundred requests rests on its two or three slowest), the yardstick for
    # the rows above.
    pairs.append((CONTROL, (small.key, TRANSACTIONS, {}), (small.key, TRANSACTIONS, {})))
    for name, small_request, large_request in pairs:
        # A fresh client and heap for each scenario: Django's test client leaves ~13 objects
        # behind per request (a weakref.finalize per signal it connects), which made the
        # oldest generation's collections (every ~20 pairs, so on one side) ever slower, 15-25
        # ms by a few thousand requests. A server's handler keeps nothing per request.
        client = Client()
        gc.collect()
        s, big = measure_pair(client, small_request, large_request, reps)
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
            target="noise" if name == CONTROL else f"<= {TARGET_P99_RATIO}",
            met="-" if name == CONTROL else "yes" if ratio99 <= TARGET_P99_RATIO else "NO",
        )
        if name != CONTROL:
            explained[name] = plans(client, *large_request)
    report.extra = {
        "sizes": {"small": small_n, "large": large_n},
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
