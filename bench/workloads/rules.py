"""rules: the same CSV import published by a household without rules and by one with 50 active
rules (text, expression, amount, id and any/all conditions; category, tags, merchant, notes and
exclusion actions), each household new; then the same for a first Lunch Flow sync (the fake
server over real HTTP). The rules run inside the ledger batch on every row; the target is a
publish (a sync) within TARGET_RATIO of the one without rules.

Import: 100,000 rows with FULL=1, 20,000 quick; sync: 100,000 and 10,000. Each side runs
twice (three times quick), alternating, and the fastest of each side is compared (the
machine's noise lands on both); `rules_s` is the time spent running the rules themselves.
BENCH_RULES_SYNC=0 leaves the sync out."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import Report, household_create, peak_rss_mb
from bench.workloads.imports import csv_write

TARGET_RATIO = 1.3
RULES = 50


@contextmanager
def rules_timed(spent: dict[str, float]) -> Iterator[None]:
    """Add the seconds the ledger spends running the rules to spent["rules"] (instrumentation:
    the ratio of whole publishes carries the machine's noise; this is the rules' own share)."""
    from finance.ledger.rules import BatchRules

    originals = {name: getattr(BatchRules, name) for name in ("apply_to_values", "apply_to_rows")}

    def timer(original: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent["rules"] = spent.get("rules", 0.0) + time.perf_counter() - start

        return timed

    for name, original in originals.items():
        setattr(BatchRules, name, timer(original))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(BatchRules, name, original)


def rules_create(hh: Any, word: str = "purchase") -> int:
    """50 rules of the kinds a household writes, on names like "<word> <number>"; about a
    twentieth of the import's rows meet one or more."""
    from finance.services.rules import rule_create

    categories = [str(c.pk) for c in hh.categories]
    tags = [str(t.pk) for t in hh.tags]
    account = str(hh.accounts[0].pk)

    def add(n: int, conditions: list[dict], actions: list[dict], match: str = "all") -> None:
        rule_create(
            family=hh.family, name=f"rule {n}", match=match, conditions=conditions, actions=actions
        )

    n = 0
    for i in range(30):  # a shop's text on the bank line
        add(n, [{"field": "name", "operator": "contains", "value": f"{word} {1000 + i * 37}"}],
            [{"type": "set_category", "value": categories[i % len(categories)]}])  # fmt: skip
        n += 1
    for i in range(6):  # expressions
        add(n, [{"field": "name", "operator": "matches", "value": rf"{word} \d*{i}{i}7$"}],
            [{"type": "add_tags", "value": [tags[i % len(tags)]]}])  # fmt: skip
        n += 1
    for i in range(6):  # amounts within a range, on one account, without a category yet
        low = -300 + i * 100
        add(n, [{"field": "amount", "operator": "between", "value": [str(low), str(low + 2)]},
                {"field": "account_id", "operator": "equals", "value": account},
                {"field": "category_id", "operator": "is_empty"}],
            [{"type": "set_notes", "value": f"band {i}"}])  # fmt: skip
        n += 1
    for i in range(4):  # either of two texts
        add(n, [{"field": "name", "operator": "ends_with", "value": f"{i}13"},
                {"field": "notes", "operator": "starts_with", "value": f"note {i}9"}],
            [{"type": "set_merchant", "value": f"Shop {i}"}], match="any")  # fmt: skip
        n += 1
    for i in range(4):  # the dates of one month, excluded
        add(n, [{"field": "date", "operator": "between",
                 "value": [f"201{6 + i}-0{1 + i}-01", f"201{6 + i}-0{1 + i}-03"]},
                {"field": "name", "operator": "contains", "value": f"{word} 9"}],
            [{"type": "exclude", "value": True}])  # fmt: skip
        n += 1
    return n


def _sync_scenario(accounts: int, per_account: int) -> Any:
    import datetime as dt
    import random

    from providers.testing.lunchflow_server import Scenario

    rng = random.Random(3)
    today = dt.date.today()
    scenario = Scenario()
    for a in range(accounts):
        acc = f"acc-{a}"
        scenario.add_account(acc, f"Bench account {a}", currency="EUR", balance="1000.00")
        for i in range(per_account):
            n = a * per_account + i
            scenario.add_transaction(
                acc,
                f"t-{n}",
                (today - dt.timedelta(days=rng.randrange(360))).isoformat(),
                f"{(n % 90000) / 100 - 300:.2f}",
                description=f"Card payment {n}",
                merchant=f"Shop {n % 40}",
            )
    return scenario


def sync_rows(report: Report, full: bool) -> None:
    """A first Lunch Flow sync of the same rows by a household without rules and by one with
    50 (the built-rows road: `LedgerBatch.write`)."""
    from django.conf import settings
    from django.db import transaction

    from bench.upstream import LunchFlowApart
    from providers.services import connection_create, sync_request
    from providers.sync.engine import sync_run

    accounts, per_account = (20, 5000) if full else (4, 2500)
    best: dict[str, float] = {}
    own: dict[str, float] = {}
    with LunchFlowApart(_sync_scenario(accounts, per_account)) as upstream:
        settings.LUNCHFLOW_BASE_URL = upstream.base_url
        for round_ in range(2 if full else 3):
            for side in ("sync without rules", f"sync with {RULES} rules"):
                hh = household_create(f"sync-{round_}-{side[5:9]}", accounts=1)
                if "with " in side:
                    rules_create(hh, word="payment")
                connection, _ = connection_create(
                    family=hh.family, provider="lunchflow", api_key="test-key"
                )
                start = time.perf_counter()
                spent: dict[str, float] = {}
                with rules_timed(spent), transaction.atomic():
                    sync, _ = sync_request(connection=connection)
                with rules_timed(spent):
                    sync = sync_run(sync_id=sync.pk)
                seconds = time.perf_counter() - start
                assert sync.status == "completed", sync.error
                if seconds < best.get(side, float("inf")):
                    best[side], own[side] = seconds, spent.get("rules", 0.0)
                print(
                    f"round {round_ + 1} {side}: {seconds:.2f}s, rules {spent.get('rules', 0):.2f}s"
                )
    rows = accounts * per_account
    base = best["sync without rules"]
    for side, seconds in best.items():
        ratio = seconds / base
        target = (
            ""
            if side == "sync without rules"
            else (f"<= {TARGET_RATIO}x: {'yes' if ratio <= TARGET_RATIO else 'NO'}")
        )
        report.add(
            side=side, rows=rows, seconds=round(seconds, 2), rows_per_s=round(rows / seconds),
            ratio=round(ratio, 2), rules_s=round(own[side], 2), peak_rss_mb=peak_rss_mb(),
            target=target,
        )  # fmt: skip


def run(*, full: bool, backend: str) -> Report:
    from finance.models import Transaction, User
    from imports.bench_hooks import run_pipeline

    rows = 100_000 if full else 20_000
    rounds = 2 if full else 3
    report = Report("rules", backend, full)
    tmp = Path(tempfile.mkdtemp(prefix="bench-rules-"))
    path = tmp / "rows.csv"
    csv_write(path, rows)
    best: dict[str, float] = {}
    own: dict[str, float] = {}  # seconds running the rules, in the best publish
    changed = 0
    for round_ in range(rounds):
        for side in ("without rules", f"with {RULES} rules"):
            hh = household_create(f"rules-{round_}-{side[:4]}", accounts=1)
            if side != "without rules":
                assert rules_create(hh) == RULES
            user = User.objects.filter(family=hh.family).first()
            start = time.perf_counter()
            spent: dict[str, float] = {}
            with rules_timed(spent):
                phases = run_pipeline(user=user, account=hh.accounts[0], csv_path=path)
            total = time.perf_counter() - start
            publish = phases["publish"]
            if publish < best.get(side, float("inf")):
                best[side], own[side] = publish, spent.get("rules", 0.0)
            if side != "without rules":
                changed = Transaction.objects.filter(
                    family=hh.family, rule_changes__isnull=False
                ).count()
            print(
                f"round {round_ + 1} {side}: publish {publish:.2f}s (with parse {total:.2f}s), "
                f"of which running the rules {spent.get('rules', 0.0):.2f}s"
            )
    base = best["without rules"]
    for side, seconds in best.items():
        ratio = seconds / base
        target = ""
        if side != "without rules":
            target = f"<= {TARGET_RATIO}x: {'yes' if ratio <= TARGET_RATIO else 'NO'}"
        report.add(
            side=side, rows=rows, seconds=round(seconds, 2), rows_per_s=round(rows / seconds),
            ratio=round(ratio, 2), rules_s=round(own[side], 2), peak_rss_mb=peak_rss_mb(),
            target=target,
        )  # fmt: skip
    if os.environ.get("BENCH_RULES_SYNC", "1") != "0":
        sync_rows(report, full)
    report.extra.update(import_rows=rows, rounds=rounds, rows_changed_by_rules=changed)
    report.print_table(
        ["side", "rows", "seconds", "rows_per_s", "ratio", "rules_s", "peak_rss_mb", "target"]
    )
    print(f"rows changed by the rules: {changed:,} of {rows:,}")
    shutil.rmtree(path.parent, ignore_errors=True)
    return report
