"""The embedded default cache: files under DATA_DIR that every process of the service shares.

The API rate limit and the admin login lockout count with `cache.add` + `cache.incr`. Django's
file cache makes both a read then a write, so two gunicorn workers could each read 41 and both
write 42. Here both run under one exclusive lock file (`flock`), which makes each a single step
for every process on the host; a reader never sees a half-written entry because an entry is
written to a temporary file and renamed over the old one.

Why files and not Django's database cache: on SQLite every API request, reads included, would
become a write transaction for its counter, queueing behind the one writer SQLite allows (an
import's publish holds it for a long time). The embedded default already keeps the database
and the broker under DATA_DIR on one host, so a directory there reaches every process.
Several hosts share counters through Redis (`CACHE_URL`).
"""

from __future__ import annotations

import os
import pickle
import random
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.filebased import FileBasedCache
from django.core.files import locks

LOCK_NAME = ".lock"


class SharedFileCache(FileBasedCache):
    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        self._createdir()
        with open(os.path.join(self._dir, LOCK_NAME), "ab") as handle:
            locks.lock(handle, locks.LOCK_EX)
            try:
                yield
            finally:
                locks.unlock(handle)

    def add(
        self,
        key: str,
        value: Any,
        timeout: float | None = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> bool:
        with self._exclusive():
            if self.has_key(key, version):
                return False
            self._cull()
            self._replace(self._key_to_file(key, version), self.get_backend_timeout(timeout), value)
            return True

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> int:
        fname = self._key_to_file(key, version)
        with self._exclusive():
            try:  # entries are written only by this service, in its own 0700 directory
                with open(fname, "rb") as handle:
                    expiry = pickle.load(handle)  # noqa: S301
                    value = pickle.loads(zlib.decompress(handle.read()))  # noqa: S301
            except (FileNotFoundError, EOFError):
                raise ValueError(f"Key '{key}' not found") from None
            if expiry is not None and expiry < time.time():
                self._delete(fname)
                raise ValueError(f"Key '{key}' not found")
            value += delta
            self._replace(fname, expiry, value)
            return value

    def _replace(self, fname: str, expiry: float | None, value: Any) -> None:
        fd, tmp_path = tempfile.mkstemp(dir=self._dir)
        try:
            with open(fd, "wb") as handle:
                handle.write(pickle.dumps(expiry, self.pickle_protocol))
                handle.write(zlib.compress(pickle.dumps(value, self.pickle_protocol)))
            os.replace(tmp_path, fname)
        except BaseException:
            if os.path.exists(tmp_path):
                os.remove(tmp_path)
            raise

    def _cull(self) -> None:
        """Expired entries go first (a rate-limit window's counter is never read again once the
        window is over); live ones are dropped at random only if the cache is still full."""
        filelist = self._list_cache_files()
        if len(filelist) < self._max_entries:
            return
        live = []
        now = time.time()
        for fname in filelist:
            try:
                with open(fname, "rb") as handle:
                    expiry = pickle.load(handle)  # noqa: S301
            except (FileNotFoundError, EOFError, pickle.UnpicklingError):
                expiry = 0
            if expiry is not None and expiry < now:
                self._delete(fname)
            else:
                live.append(fname)
        if len(live) >= self._max_entries and self._cull_frequency:
            for fname in random.sample(live, len(live) // self._cull_frequency):
                self._delete(fname)


def count_hit(key: str, timeout: int) -> int:
    """Add one to the counter `key` that every process shares, and return its new value. The
    counter is created by its first hit and expires `timeout` seconds after it."""
    from django.core.cache import cache

    try:
        return cache.incr(key)
    except ValueError:  # no counter yet (or it just expired)
        pass
    if cache.add(key, 1, timeout=timeout):
        return 1
    try:  # another process created it in between
        return cache.incr(key)
    except ValueError:
        return 1
