"""`make e2e`: the production shape (scripts/e2e/stack.py) under faults.

It drives the API, an import (CSV upload through the API, then publish) and a provider sync
(against the fake Lunch Flow server, a real process); SIGKILLs the Celery worker running the
publish, and later the one running the sync, each in the middle (the publish once its progress
shows rows written in its open transaction; the sync once the slowed fake server is answering
it), restarts it, and checks:

- the import ends published or untouched, never partial (counted while it runs), published
  whole once the broker hands the task out again;
- the sync record is retried and ends `completed`, every upstream row stored once;
- two workers never run one connection's sync at once (the sync records do not overlap, and
  the fake server never had two of that connection's requests in flight);
- beat's every send ran exactly once with two workers;
- `manage.py ledger_check` finds no difference.

Prints PASS/FAIL per check; exits 1 on a failure, 0 with a message when PostgreSQL or Redis is
not reachable. `--keep` leaves the logs (the temp folder is printed).

    python scripts/e2e/run.py [--keep]"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.e2e import phases
from scripts.e2e.stack import Stack, unreachable


class Checks:
    def __init__(self) -> None:
        self.failed: list[str] = []
        self.count = 0

    def __call__(self, name: str, ok: bool, detail: str = "") -> bool:
        self.count += 1
        if not ok:
            self.failed.append(name)
        print(f"{'PASS' if ok else 'FAIL'}  {name}{f' ({detail})' if detail else ''}", flush=True)
        return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the logs and data folder")
    args = parser.parse_args()
    why = unreachable()
    if why:
        print(f"e2e SKIPPED: {why}")
        return 0
    started = time.monotonic()
    stack = Stack()
    check = Checks()
    print(f"e2e: logs in {stack.tmp}", flush=True)
    try:
        key = stack.setup()
        for name in ("fake", "web", "worker1", "worker2", "beat"):
            stack.start(name)
        for name in ("fake", "web", "worker1", "worker2", "beat"):
            stack.wait_ready(name)
        print(f"e2e: up in {time.monotonic() - started:.0f}s", flush=True)
        api = phases.Api(stack.web_url, key)
        account_id = phases.api_round(api, check)
        phases.import_killed_mid_publish(stack, api, check, account_id)
        phases.sync_killed_mid_run(stack, api, check)
        phases.beat_once_per_send(stack, check)
        out = stack.manage("ledger_check")
        check("ledger_check finds no difference", "0 difference(s)" in out, out.strip()[-200:])
    except Exception as exc:
        check("the run itself", False, f"{exc.__class__.__name__}: {exc}")
        for name in stack.procs:
            print(f"--- {name} log tail ---\n{stack.tail(name, 1500)}")
    finally:
        stack.teardown(keep=args.keep or bool(check.failed))
    seconds = time.monotonic() - started
    if check.failed:
        print(f"e2e FAILED: {len(check.failed)} of {check.count} checks ({seconds:.0f}s)")
        print(f"logs kept in {stack.tmp}")
        return 1
    print(f"e2e passed: {check.count} checks in {seconds:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
