"""The registry of workloads: name -> module path with `run(*, full, backend) -> Report`.

Add a workload by adding a module here. A workload whose code is not on this branch yet
(imports, provider sync) reports itself as skipped instead of failing the run."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

WORKLOADS: dict[str, str] = {
    "create": "bench.workloads.create",
    "list": "bench.workloads.listing",
    "import": "bench.workloads.imports",
    "sync": "bench.workloads.sync",
    "net_worth": "bench.workloads.net_worth",
    "rules": "bench.workloads.rules",
    "old_dates": "bench.workloads.old_dates",
    "load": "bench.workloads.load",
    "export": "bench.workloads.exports",
}


def workload(name: str) -> Callable[..., Any]:
    return importlib.import_module(WORKLOADS[name]).run
