"""old_dates: a write dated 1900 against one dated today (decisions.md "Bounds": a write dated in
1900 costs about what a write dated today costs).

One account holds ten years of rows (10,000 quick, 100,000 full) with its balance series
derived. Single POST /api/v1/transactions, then DELETE of the same row, dated today, on the
ledger's first day (ten years back) and on 1900-01-01, interleaved so load hits each alike.
The series is sparse (finance/ledger/balances.py): a write recomputes the rows of days with
flows after it, so 1900 costs what the ledger's first day costs, not 46,000 calendar days.
Requests go through the whole Django stack in-process (no socket): the server's time."""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

from bench.common import Report, household_create, latency_summary, peak_rss_mb, seed_transactions

TARGET_RATIO = 2.0  # 1900 against the ledger's first day (the same recomputation)


def _derive(hh: Any) -> float:
    from finance.ledger import ledger_batch

    began = time.perf_counter()
    with ledger_batch(family=hh.family) as batch:
        for account in hh.accounts:
            batch.touch(hh.family, account.pk, None)
    return time.perf_counter() - began


def run(*, full: bool, backend: str) -> Report:
    from django.test import Client

    from finance.models import AccountBalance

    report = Report("old_dates", backend, full)
    rows = 100_000 if full else 10_000
    reps = 20 if full else 10
    hh = household_create("olddates", accounts=1)
    seed_transactions(hh, rows)  # dates from 2016-01-01 over ten years
    derived = _derive(hh)
    account = hh.accounts[0]
    series_rows = AccountBalance.objects.filter(account=account).count()
    client = Client()
    today = dt.date.today()
    dates = {
        "today": today,
        "the ledger's first day (2016-01-01)": dt.date(2016, 1, 1),
        "1900-01-01": dt.date(1900, 1, 1),
    }
    samples: dict[str, dict[str, list[float]]] = {n: {"create": [], "delete": []} for n in dates}
    for i in range(reps + 1):  # the first round warms up
        for name, day in dates.items():
            body = {
                "account_id": str(account.pk),
                "date": day.isoformat(),
                "amount": "12.3400",
                "name": f"Bench old date {i}",
            }
            began = time.perf_counter()
            r = client.post(
                "/api/v1/transactions", json.dumps({"transaction": body}),
                content_type="application/json", HTTP_X_API_KEY=hh.key,
            )  # fmt: skip
            created = time.perf_counter() - began
            assert r.status_code == 201, (r.status_code, r.content[:300])
            pk = r.json()["id"]
            began = time.perf_counter()
            r = client.delete(f"/api/v1/transactions/{pk}", HTTP_X_API_KEY=hh.key)
            deleted = time.perf_counter() - began
            assert r.status_code in (200, 204), (r.status_code, r.content[:300])
            if i:
                samples[name]["create"].append(created)
                samples[name]["delete"].append(deleted)
    base = {op: latency_summary(samples["today"][op])["p50_ms"] for op in ("create", "delete")}
    first = "the ledger's first day (2016-01-01)"
    for name in dates:
        for op in ("create", "delete"):
            s = latency_summary(samples[name][op])
            report.add(
                write=f"{op} dated {name}", n=s["n"], p50_ms=s["p50_ms"], p99_ms=s["p99_ms"],
                vs_today=round(s["p50_ms"] / base[op], 2),
            )  # fmt: skip
    old = latency_summary(samples["1900-01-01"]["create"])["p50_ms"]
    ratio = old / latency_summary(samples[first]["create"])["p50_ms"]
    report.extra = {
        "ledger_rows": rows,
        "balance_rows": series_rows,
        "derive_seconds": round(derived, 2),
        "create_1900_vs_first_day": round(ratio, 2),
        "create_1900_vs_today": round(old / base["create"], 2),
        "target_1900_vs_first_day": TARGET_RATIO,
        "peak_rss_mb": peak_rss_mb(),
    }
    report.print_table(["write", "n", "p50_ms", "p99_ms", "vs_today"])
    met = "yes" if ratio <= TARGET_RATIO else "NO"
    print(
        f"{rows:,} rows, {series_rows:,} balance rows: a create dated 1900 costs "
        f"{ratio:.2f}x one on the ledger's first day (target <= {TARGET_RATIO}: {met}) and "
        f"{old / base['create']:.2f}x one dated today"
    )
    return report
