"""sync: the fake Lunch Flow server with 20 accounts x 5,000 transactions: a first sync, a
repeat with nothing changed (rows written must be 0), and one with 1% of rows changed.

Needs the providers app. Until it is on the branch this runs from, the workload reports itself
as skipped. To wire it, provide `providers.bench_hooks.run_sync_benchmark(*, user, accounts,
transactions_per_account) -> list[dict]` that starts the fake server (port 0), connects, and
returns one row per step: {"step", "seconds", "rows_written", "requests"}; this module prints
them beside the target (unchanged re-sync < 10% of the first sync)."""

from __future__ import annotations

import importlib

from bench.common import Report, household_create

TARGET_RESYNC_SHARE = 0.10


def run(*, full: bool, backend: str) -> Report:
    accounts, per_account = 20, 5000
    report = Report("sync", backend, full)
    try:
        hooks = importlib.import_module("providers.bench_hooks")
    except ImportError:
        hooks = None
    if hooks is None or not hasattr(hooks, "run_sync_benchmark"):
        report.add(
            step="all", seconds="", rows_written="", target="skipped: no providers.bench_hooks"
        )
        report.print_table(["step", "seconds", "rows_written", "target"])
        return report
    hh = household_create("sync", accounts=0)
    from finance.models import User

    user = User.objects.filter(family=hh.family).first()
    steps = hooks.run_sync_benchmark(
        user=user, accounts=accounts, transactions_per_account=per_account
    )
    first = next((s["seconds"] for s in steps if s["step"] == "first"), None)
    for step in steps:
        target = ""
        if step["step"] == "unchanged" and first:
            share = step["seconds"] / first
            ok = share < TARGET_RESYNC_SHARE and step.get("rows_written") == 0
            target = f"< 10% of first and 0 rows: {'yes' if ok else 'NO'} ({share:.1%})"
        report.add(**step, target=target)
    report.extra = {"accounts": accounts, "transactions_per_account": per_account}
    report.print_table(["step", "seconds", "rows_written", "requests", "target"])
    return report
