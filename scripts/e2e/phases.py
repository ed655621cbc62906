"""The phases of scripts/e2e/run.py: each drives the running stack and reports its checks."""

from __future__ import annotations

import datetime as dt
import itertools
import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import requests

from scripts.e2e.stack import Stack

IMPORT_ROWS = 80_000  # publish takes seconds: long enough to be killed after its first chunk
SLOW_SECONDS = 6.0  # the fake's delay per account: one sync runs > the visibility timeout
UPSTREAM_ROWS = 2 * 40  # scripts/e2e/fake.py: two accounts of 40 rows
WORKERS = ("worker1", "worker2")
Check = Callable[..., bool]


class Api:
    def __init__(self, base_url: str, key: str) -> None:
        self.base = f"{base_url}/api/v1"
        self.session = requests.Session()
        self.session.headers["X-Api-Key"] = key

    def __call__(self, method: str, path: str, expect: int | tuple = 200, **kw: Any) -> Any:
        response = self.session.request(method, f"{self.base}{path}", timeout=60, **kw)
        codes = expect if isinstance(expect, tuple) else (expect,)
        if response.status_code not in codes:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:500]}")
        return response.json()


def wait_until(
    what: str, probe: Callable[[], Any], timeout: float, every: float = 0.1, soft: bool = False
) -> Any:
    """The probe's first truthy value; on timeout an error, or None when `soft` (the caller
    then reports the state it found as a failed check and the run goes on)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(every)
    if soft:
        print(f"      timed out after {timeout:.0f}s waiting for {what}", flush=True)
        return None
    raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}")


# --- worker logs -------------------------------------------------------------------------------

TASK_LINE = re.compile(r"Task ([\w.]+)\[([0-9a-f-]{36})\] (received|succeeded|failed|raised)")


def task_events(stack: Stack, worker: str) -> list[tuple[str, str, str]]:
    text = stack.log(worker).read_text(errors="replace")
    return TASK_LINE.findall(text)


def worker_running(stack: Stack, task: str) -> str | None:
    """The worker holding an unfinished `task` (received, no outcome yet)."""
    for worker in WORKERS:
        received, done = set(), set()
        for name, task_id, event in task_events(stack, worker):
            if name == task:
                (received if event == "received" else done).add(task_id)
        if received - done:
            return worker
    return None


def kill_and_restart(stack: Stack, worker: str) -> float:
    pid = stack.kill(worker)
    killed_at = time.time()
    print(f"      SIGKILL {worker} (pid {pid} and its pool), restarting it", flush=True)
    stack.start(worker)
    return killed_at


# --- the phases ----------------------------------------------------------------------------------


def api_round(api: Api, check: Check) -> str:
    account = api("POST", "/accounts", 201, json={"account": {"name": "E2E", "currency": "EUR"}})
    today = dt.date.today()
    one = {"account_id": account["id"], "date": today.isoformat(), "amount": "-3.40"}
    api("POST", "/transactions", 201, json={"transaction": {**one, "name": "E2E coffee"}})
    items = [
        {**one, "name": f"E2E bulk {n}", "external_id": f"e2e-bulk-{n}", "amount": f"-{n + 1}"}
        for n in range(20)
    ]
    bulk = api("POST", "/transactions/bulk", 200, json={"transactions": items})
    listed = api("GET", "/transactions", params={"account_id": account["id"], "per_page": 100})
    found = api("GET", "/transactions", params={"search": "coffee"})
    total = listed["pagination"]["total_count"]
    names = [t["name"] for t in found["transactions"]]
    check(
        "API: account, transaction, bulk of 20, list, search",
        total == 21 and names == ["E2E coffee"],
        f"bulk answered {len(bulk.get('results', bulk.get('transactions', [])))} items, "
        f"list total {total}, search {names}",
    )
    return account["id"]


def _csv(rows: int) -> bytes:
    lines = ["date,amount,name"]
    start = dt.date(2024, 1, 1)
    for n in range(rows):
        day = start + dt.timedelta(days=n % 365)
        lines.append(f"{day.isoformat()},{-(n % 5000) / 100 - 1:.2f},E2E import {n}")
    return ("\n".join(lines) + "\n").encode()


def import_killed_mid_publish(stack: Stack, api: Api, check: Check, account_id: str) -> None:
    config = {
        "account_id": account_id,
        "date_col_label": "date",
        "amount_col_label": "amount",
        "name_col_label": "name",
        "date_format": "%Y-%m-%d",
        "number_format": "1,234.56",
    }
    files = {"file": ("e2e.csv", _csv(IMPORT_ROWS), "text/csv")}
    imp = api("POST", "/imports", (201, 202), data=config, files=files)["data"]
    path = f"/imports/{imp['id']}"
    imp = wait_until("the worker to parse the upload", lambda: _idle(api("GET", path)), 180, 0.5)
    check(
        "import: uploaded and parsed by a worker, publishable",
        imp["status"] == "pending" and imp["status_detail"]["publishable"],
        f"{imp['stats'].get('rows_count')} rows, status {imp['status']}",
    )

    def rows_written() -> int:
        return stack.sql(
            "SELECT count(*) FROM finance_transaction WHERE import_id = %s", (imp["id"],)
        )[0][0]

    api("POST", f"{path}/publish", 202)
    mid = wait_until(
        "the publish to report rows written",
        lambda: (
            lambda i: i if i["status"] != "importing" or i["stats"]["rows_processed"] else None
        )(api("GET", path)["data"]),
        180,
    )
    worker = worker_running(stack, "imports.publish")
    if not check(
        "import: SIGKILL lands in the middle of the publish",
        mid["status"] == "importing" and worker is not None,
        f"{mid['stats']['rows_processed']} of {IMPORT_ROWS} rows written in the open transaction",
    ):
        return
    killed_at = kill_and_restart(stack, worker)
    after_kill = rows_written()
    check("import: nothing partial after the kill", after_kill == 0, f"{after_kill} rows visible")
    seen: set[int] = set()

    def finished() -> dict | None:
        seen.add(rows_written())
        data = api("GET", path)["data"]
        return data if data["status"] not in ("importing", "pending") else None

    stack.wait_ready(worker)
    done = wait_until("the redelivered publish to finish", finished, 180, 0.25)
    after = time.time() - killed_at
    final = rows_written()
    check(
        "import: only ever none or all of the rows visible",
        seen <= {0, IMPORT_ROWS},
        f"row counts seen while it ran: {sorted(seen)}",
    )
    check(
        "import: the publish is run again and ends published, every row once",
        done["status"] == "complete" and final == IMPORT_ROWS,
        f"status {done['status']} {after:.0f}s after the kill, {final} rows,"
        f" rows_processed {done['stats']['rows_processed']}",
    )


def _idle(body: dict) -> dict | None:
    imp = body["data"]
    return None if imp["parsing"] or imp["status"] == "importing" else imp


def sync_killed_mid_run(stack: Stack, api: Api, check: Check) -> None:
    connection = api(
        "POST", "/provider_connections", 201, json={"provider": "lunchflow", "api_key": "e2e-key"}
    )
    stack.fake("slow", delay=SLOW_SECONDS)
    asked_before = stack.fake("stats")["transactions_requests"]
    sync = api("POST", f"/provider_connections/{connection['id']}/sync", 202)
    path = f"/syncs/{sync['id']}"
    wait_until(
        "the sync to be waiting on the slowed provider",
        lambda: (
            api("GET", path)["status"] == "syncing"
            and stack.fake("stats")["transactions_requests"] > asked_before
        ),
        120,
    )
    worker = worker_running(stack, "providers.sync")
    if not check(
        "sync: SIGKILL lands in the middle of the sync", worker is not None, f"sync {sync['id']}"
    ):
        return
    killed_at = kill_and_restart(stack, worker)
    left = api("GET", path)
    check(
        "sync: the killed run left no outcome",
        left["status"] == "syncing",
        f"status {left['status']}",
    )
    stack.wait_ready(worker)
    done = wait_until(
        "the sync to be taken over and finish",
        lambda: (lambda s: s if s["status"] in ("completed", "failed") else None)(api("GET", path)),
        120,
        0.5,
        soft=True,
    ) or api("GET", path)
    after = time.time() - killed_at
    stack.fake("slow", delay=0)
    per_account = stack.sql(
        "SELECT account_id, count(*) FROM finance_transaction WHERE source = 'lunchflow'"
        " GROUP BY account_id"
    )
    counts = sorted(n for _, n in per_account)
    check(
        "sync: retried after the kill and completed, every upstream row once",
        done["status"] == "completed" and counts == [UPSTREAM_ROWS // 2] * 2,
        f"status {done['status']} {after:.0f}s after the kill"
        f"{': ' + done['error'] if done.get('error') else ''}, rows per account {counts}",
    )
    inflight = stack.fake("stats")["max_inflight"].get("e2e-key")
    # a copy of the task handed out while a runner held the connection (the run is longer
    # than the visibility timeout) answers at once without running
    logs = "".join(stack.log(w).read_text(errors="replace") for w in WORKERS)
    refused = len(re.findall(rf"succeeded in [\d.]+s: 'sync {sync['id']} syncing'", logs))
    check(
        "sync: never two runners of the connection at once (provider side)",
        inflight == 1,
        f"at most {inflight} of its requests in flight at once; "
        f"{refused} redelivered copies refused by the runner lock",
    )
    stack.__dict__["connection_id"] = connection["id"]


def sync_records_never_overlap(stack: Stack, check: Check) -> None:
    rows = stack.sql(
        "SELECT status, started_at, finished_at FROM providers_sync WHERE connection_id = %s"
        " ORDER BY started_at NULLS LAST",
        (stack.__dict__["connection_id"],),
    )
    ran = [(s, a, b) for s, a, b in rows if a is not None]
    overlaps = [
        (first, second)
        for first, second in itertools.pairwise(ran)
        if first[2] is None or first[2] > second[1]
    ]
    statuses = Counter(s for s, _, _ in rows)
    check(
        "sync records: one connection's syncs never overlap",
        not overlaps and statuses.get("syncing", 0) == 0 and statuses.get("pending", 0) == 0,
        f"{len(rows)} syncs {dict(statuses)}, {len(overlaps)} overlapping",
    )


def beat_once_per_send(stack: Stack, check: Check) -> None:
    """Stop beat, let what it sent finish, then match its sends with the workers' runs."""
    wait_until(
        "beat to send the sync schedule three times",
        lambda: stack.log("beat").read_text().count("(providers.sync_all)") >= 3,
        90,
        1,
    )
    stack.stop("beat")
    sends = Counter(re.findall(r"Sending due task .*? \(([\w.]+)\)", stack.log("beat").read_text()))

    def runs() -> dict[str, Counter] | None:
        events = [e for w in WORKERS for e in task_events(stack, w)]
        received = {(n, i) for n, i, ev in events if ev == "received" and n in sends}
        done = Counter((n, i) for n, i, ev in events if ev != "received" and n in sends)
        if received - set(done):
            return None
        out: dict[str, Counter] = {}
        for (name, task_id), count in done.items():
            out.setdefault(name, Counter())[task_id] = count
        return out

    ran = wait_until("the last sends to be run", runs, 60, 1)
    wait_until(
        "every sync to end",
        lambda: (
            not stack.sql("SELECT 1 FROM providers_sync WHERE status IN ('pending', 'syncing')")
        ),
        60,
        1,
        soft=True,
    )
    sync_records_never_overlap(stack, check)
    detail = ", ".join(
        f"{name}: {sends[name]} sent, {len(ran.get(name, {}))} run"
        f"{'' if max(ran.get(name, Counter({'': 1})).values()) == 1 else ' (some twice)'}"
        for name in sorted(sends)
    )
    once = all(
        len(ran.get(name, {})) == count and max(ran[name].values()) == 1
        for name, count in sends.items()
    )
    check("beat: every send run exactly once across two workers", once, detail)
