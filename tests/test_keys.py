"""Version-7 keys (core/keys.py) draw their random bits from a per-thread page of system
random bytes: no two threads, and no forked child and its parent, ever hand out the same
bits."""

from __future__ import annotations

import os
import threading
import uuid

from core.keys import uuid7, uuid7_batch, uuid7_hex


def _random_part(key: uuid.UUID) -> int:
    return key.int & ((1 << 76) - 1)  # below the version: the random bits (and the variant)


def test_keys_of_one_thread_are_distinct_across_pool_refills():
    keys = [uuid7() for _ in range(5000)]  # the pool refills every 409 keys
    assert len({_random_part(k) for k in keys}) == 5000
    assert {k.version for k in keys} == {7} and {k.variant for k in keys} == {uuid.RFC_4122}


def test_each_thread_draws_its_own_page(monkeypatch):
    """A thread never takes bytes from another's page: its first key reads a page of its own
    even while the main thread's page still holds unread bytes."""
    from core import keys

    uuid7()  # the main thread's page, nearly all unread
    draws: list[threading.Thread] = []
    system = os.urandom

    def counted(n: int) -> bytes:
        draws.append(threading.current_thread())
        return system(n)

    monkeypatch.setattr(keys.os, "urandom", counted)
    found: list[list[int]] = [[], []]

    def make(out: list[int]) -> None:
        out.extend(_random_part(uuid7()) for _ in range(100))

    workers = [threading.Thread(target=make, args=(out,)) for out in found]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(draws) == 2 and len(set(draws)) == 2  # one page each, none for the main thread
    assert len(set(found[0]) | set(found[1])) == 200


def test_a_forked_child_does_not_repeat_its_parents_next_keys():
    uuid7()  # the parent's pool holds unread bytes when it forks
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next keys, to the parent
        try:
            os.write(write, "".join(uuid7_hex() for _ in range(20)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = pipe.read()
    os.waitpid(pid, 0)
    child_keys = {_random_part(uuid.UUID(child[i : i + 32])) for i in range(0, len(child), 32)}
    parent_keys = {_random_part(uuid7()) for _ in range(20)}
    assert len(child_keys) == 20 and not child_keys & parent_keys


def test_a_batch_of_keys_is_version_7_distinct_and_of_now():
    import time

    before = time.time_ns() // 1_000_000
    keys = uuid7_batch(5000)
    after = time.time_ns() // 1_000_000
    assert len(keys) == 5000 and len({_random_part(k) for k in keys}) == 5000
    assert {k.version for k in keys} == {7} and {k.variant for k in keys} == {uuid.RFC_4122}
    assert {before <= k.int >> 80 <= after for k in keys} == {True}
    assert not set(keys) & set(uuid7_batch(5000))
    assert uuid7_batch(0) == []
