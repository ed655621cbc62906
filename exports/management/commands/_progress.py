"""Progress lines for the export and restore commands (one line per kind and every 10,000
records; no progress-bar package is installed)."""

from __future__ import annotations

import time
from typing import TextIO


class ProgressLines:
    def __init__(self, out: TextIO, verb: str) -> None:
        self.out, self.verb = out, verb
        self.started = time.monotonic()
        self.last: tuple[str, int] | None = None

    def __call__(self, kind: str, done: int) -> None:
        if self.last == (kind, done):
            return
        self.last = (kind, done)
        seconds = time.monotonic() - self.started
        self.out.write(f"{self.verb} {kind}: {done:,} records ({seconds:.1f} s)\n")
        self.out.flush()
