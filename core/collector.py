"""The garbage collector's cycle search paused while a bulk loop runs.

CPython frees an object when its last reference goes; the collector only looks for reference
cycles, and it runs by counting allocations: each 700 new containers a young collection, and
after enough of those a full one that walks every object of the process (Django's modules,
models, caches: hundreds of thousands). Parsing a file allocates several containers a row (its
cells, the parsed row, the tuple written), so a 200,000-row CSV set off about 1,200 young
and 10 full collections, 18% of its parse (bench/README.md), while the loop makes no cycles:
its rows are freed by their reference counts batch by batch. `cycles_paused()` turns the
collection off for such a loop and back on after it (whatever its end), and a collection
then finds whatever cycles were left meanwhile. Nested or concurrent pauses (threads) end
when the last one does, and the collector stays off only if it was off before."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_paused = 0  # pauses open in this process
_was_enabled = False  # the collector's state when the first of them began


@contextmanager
def cycles_paused() -> Iterator[None]:
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
