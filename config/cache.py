"""The embedded default cache: files under DATA_DIR that every process of the service shares.

The API rate limit and the admin login lockout count with `cache.incr` (and `cache.add` for a
counter's first hit). Django's file cache makes each a read then a write, so two gunicorn
workers could both read 41 and both write 42. Here every operation holds one lock file
(`flock`: exclusive to write, shared to read), which makes each a single step for every process
and thread on the host. Holding it, a counter is rewritten in place: the usual write to a
temporary file and rename over the old one (there so readers never see half an entry) costs
ext4 a data flush per rename, which no reader needs when readers take the lock.

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
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.filebased import FileBasedCache
from django.core.files import locks

LOCK_NAME = ".lock"


class SharedFileCache(FileBasedCache):
    @contextmanager
    def _locked(self, mode: int) -> Iterator[None]:
        self._createdir()
        with open(os.path.join(self._dir, LOCK_NAME), "ab") as handle:
            locks.lock(handle, mode)
            try:
                yield
            finally:
                locks.unlock(handle)

    # Reads take the lock shared; everything that writes takes it exclusive. The parent's
    # methods run inside, unlocked (a second flock from this process would wait on the first).
    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        with self._locked(locks.LOCK_SH):
            return super().get(key, default, version)

    def has_key(self, key: str, version: int | None = None) -> bool:
        with self._locked(locks.LOCK_SH):
            return super().has_key(key, version)

    def set(
        self,
        key: str,
        value: Any,
        timeout: float | None = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> None:
        with self._locked(locks.LOCK_EX):
            super().set(key, value, timeout, version)

    def touch(
        self, key: str, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        with self._locked(locks.LOCK_EX):
            return super().touch(key, timeout, version)

    def delete(self, key: str, version: int | None = None) -> bool:
        with self._locked(locks.LOCK_EX):
            return super().delete(key, version)

    def clear(self) -> None:
        with self._locked(locks.LOCK_EX):
            super().clear()

    def add(
        self,
        key: str,
        value: Any,
        timeout: float | None = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> bool:
        with self._locked(locks.LOCK_EX):
            if super().has_key(key, version):
                return False
            self._cull()
            with open(self._key_to_file(key, version), "wb") as handle:
                self._write_entry(handle, self.get_backend_timeout(timeout), value)
            return True

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> int:
        fname = self._key_to_file(key, version)
        with self._locked(locks.LOCK_EX):
            try:  # entries are written only by this service, in its own 0700 directory
                with open(fname, "r+b") as handle:
                    expiry = pickle.load(handle)  # noqa: S301
                    value = pickle.loads(zlib.decompress(handle.read()))  # noqa: S301
                    if expiry is None or expiry >= time.time():
                        value += delta
                        handle.seek(0)
                        self._write_entry(handle, expiry, value)
                        handle.truncate()
                        return value
            except (FileNotFoundError, EOFError):
                pass
            else:
                self._delete(fname)  # expired
            raise ValueError(f"Key '{key}' not found")

    def _write_entry(self, handle: BinaryIO, expiry: float | None, value: Any) -> None:
        handle.write(pickle.dumps(expiry, self.pickle_protocol))
        handle.write(zlib.compress(pickle.dumps(value, self.pickle_protocol)))

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
