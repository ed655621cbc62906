"""sync: the fake Lunch Flow server (real HTTP on 127.0.0.1, port 0, in a process of its own:
bench/upstream.py) with 20 accounts x 5,000 transactions over the last year: a first sync, a
repeat with nothing changed (rows written must be 0), and one with 1% of the rows changed
(within the re-sync window, so the sync can see them);
beside them the bare floor (bench/floors.py): the same 100,000 rows COPYed / executemany'd into a
plain table in one transaction. Targets (issue 19): first sync <= 3x the floor, unchanged
re-sync < 10% of the first.

The engine runs inline (`sync_request` + `sync_run`, as the providers tests do), not through
the task queue, so the figures are the sync's own time."""

from __future__ import annotations

import datetime as dt
import importlib.util
import random
import time
from typing import Any

from bench.common import Report, household_create, peak_rss_mb, vendor
from bench.cpu import cpu_meter

TARGET_RESYNC_SHARE = 0.10
TARGET_FIRST_RATIO = 3.0


def _scenario(accounts: int, per_account: int) -> Any:
    from providers.testing.lunchflow_server import Scenario

    rng = random.Random(11)
    today = dt.date.today()
    scenario = Scenario()
    for a in range(accounts):
        acc = f"acc-{a}"
        scenario.add_account(acc, f"Bench account {a}", currency="EUR", balance="1000.00")
        for i in range(per_account):
            scenario.add_transaction(
                acc,
                f"t-{a}-{i}",
                (today - dt.timedelta(days=rng.randrange(360))).isoformat(),
                f"{rng.randrange(-50000, 20000) / 100:.2f}",
                description=f"Card payment {i % 300}",
                merchant=f"Shop {i % 40}",
            )
    return scenario


FLOOR_COLUMNS = [
    "id", "family_id", "account_id", "date", "amount", "currency", "name", "external_id",
    "source", "pending", "provider_snapshot", "created_at", "updated_at",
]  # fmt: skip


def bare_floor(hh: Any, scenario: Any) -> tuple[float, int]:
    """The upstream rows COPYed / executemany'd in one transaction into a plain table
    (bench/floors.py), each with its snapshot as JSON text, as the first sync stores them."""
    import json
    import uuid

    from bench.floors import bare_load, ident

    pg = vendor() == "postgresql"
    now = dt.datetime.now(dt.UTC)
    stamp = now.isoformat() if pg else now.strftime("%Y-%m-%d %H:%M:%S")
    family = ident(hh.family)
    accounts = {acc: ident(uuid.uuid4()) for acc in scenario.transactions}

    def tuples() -> Any:
        for acc, rows in scenario.transactions.items():
            for r in rows:
                yield (
                    ident(uuid.uuid4()), family, accounts[acc], r["date"], r["amount"],
                    r["currency"], r["description"], r["id"], "lunchflow",
                    r["isPending"] if pg else int(r["isPending"]), json.dumps(r), stamp, stamp,
                )  # fmt: skip

    return bare_load(FLOOR_COLUMNS, tuples())


def _run_sync(connection: Any) -> tuple[float, Any, Any]:
    from django.db import transaction

    from providers.services import sync_request
    from providers.sync.engine import sync_run

    with cpu_meter() as meter:
        start = time.perf_counter()
        with transaction.atomic():
            sync, created = sync_request(connection=connection)
        assert created, "an earlier sync is still active"
        sync = sync_run(sync_id=sync.pk)
        seconds = time.perf_counter() - start
    return seconds, sync, meter.sample


def run(*, full: bool, backend: str) -> Report:
    accounts, per_account = 20, 5000
    report = Report("sync", backend, full)
    if importlib.util.find_spec("providers.testing.lunchflow_server") is None:
        report.add(step="all", seconds="", rows_written="", target="skipped: no providers app")
        report.print_table(["step", "seconds", "rows_written", "target"])
        return report
    from django.conf import settings

    from bench.upstream import LunchFlowApart
    from providers.services import connection_create

    scenario = _scenario(accounts, per_account)
    hh = household_create("sync", accounts=0, categories=0)
    steps = []
    requests = 0
    with LunchFlowApart(scenario) as upstream:
        settings.LUNCHFLOW_BASE_URL = upstream.base_url
        connection, _ = connection_create(
            family=hh.family, provider="lunchflow", api_key="test-key"
        )
        first, sync, cpu = _run_sync(connection)
        steps.append(("first", first, sync, cpu))
        again, sync, cpu = _run_sync(connection)
        steps.append(("unchanged", again, sync, cpu))
    requests += upstream.requests
    # 1% of all rows change, picked among those inside the re-sync window; a new server
    # process serves the changed scenario.
    window_start = dt.date.today() - dt.timedelta(days=settings.SYNC_OVERLAP_DAYS - 1)
    recent = [
        row
        for rows in scenario.transactions.values()
        for row in rows
        if row["date"] >= window_start.isoformat()
    ]
    for row in random.Random(5).sample(recent, min(len(recent), accounts * per_account // 100)):
        row["amount"] = f"{float(row['amount']) + 1:.2f}"
    with LunchFlowApart(scenario) as upstream:
        settings.LUNCHFLOW_BASE_URL = upstream.base_url
        changed, sync, cpu = _run_sync(connection)
        steps.append(("1% changed", changed, sync, cpu))
    requests += upstream.requests
    with cpu_meter() as meter:
        floor_secs, floor_rows = bare_floor(hh, scenario)
    report.add(
        step=f"FLOOR: {floor_rows:,} rows, plain table", status="", seconds=round(floor_secs, 2),
        rows_written=floor_rows, unchanged="", peak_rss_mb=peak_rss_mb(), target="",
        **meter.sample.columns(),
    )  # fmt: skip
    for name, seconds, sync, cpu in steps:
        stats = sync.stats or {}
        written = stats.get("transactions_added", 0) + stats.get("transactions_updated", 0)
        target = ""
        if name == "first":
            ratio = seconds / floor_secs
            ok = "yes" if ratio <= TARGET_FIRST_RATIO else "NO"
            target = f"<= {TARGET_FIRST_RATIO}x floor: {ok} ({ratio:.2f}x)"
        if name == "unchanged":
            share = seconds / first
            ok = share < TARGET_RESYNC_SHARE and written == 0
            target = f"< 10% of first, 0 rows: {'yes' if ok else 'NO'} ({share:.1%})"
        report.add(
            step=name, status=sync.status, seconds=round(seconds, 2), rows_written=written,
            unchanged=stats.get("transactions_unchanged", ""), peak_rss_mb=peak_rss_mb(),
            target=target, **cpu.columns(floor_secs if name == "first" else None),
        )  # fmt: skip
    report.extra = {
        "accounts": accounts,
        "transactions_per_account": per_account,
        "requests_to_fake_server": requests,
        "note": "re-syncs fetch from the last window end minus SYNC_OVERLAP_DAYS",
    }
    report.print_table(
        [
            "step", "status", "seconds", "rows_written", "unchanged", "peak_rss_mb",
            "our_cpu_s", "db_cpu_s", "cpu_bound_x", "target",
        ]
    )  # fmt: skip
    return report
