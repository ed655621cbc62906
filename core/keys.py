"""Time-ordered keys (UUID version 7, RFC 9562) for rows written in bulk.

A random key (version 4) lands each new row on a random page of the primary-key index: past
the cache (a million ledger rows on PostgreSQL's default 128 MB of buffers) every insert reads
and dirties its own page. A version-7 key starts with the time in milliseconds, so a batch's
keys are neighbours and its rows fill the index's last pages (measured: 1,000,000 ledger rows
by one INSERT ... SELECT, 110 s with random keys, 95 s with these, 75 s when the rows also go
in their date order; bench/README.md). Keys stay opaque to clients: the API promises a UUID."""

from __future__ import annotations

import os
import threading
import time
import uuid

# PostgreSQL (15 has no uuidv7()): keys for the rows of one statement, rising in the order the
# statement writes them (RFC 9562, 6.2 method 1, a dedicated counter): the statement's start
# time in ms, the version, the row's number in that order (`row_number() OVER (ORDER BY ...)`,
# 32 bits: the 12 of rand_a and the first 20 of rand_b), the variant, and 40 random bits drawn
# once for the statement (an InitPlan). A key per row from the clock and a version-4 key cost
# 2.2 s of a 1,000,000-row publish (string work and 1 us of strong randomness a row); these
# 0.4 s. Rows of one statement differ by their number, statements by their time or their draw.
_N = "(row_number() OVER (ORDER BY {order}) - 1)"
_HIGH = (  # time in ms, version, the number's top 12 bits
    "(floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint << 16) | 28672"
    f" | ({_N} >> 20)"
)
_LOW = (  # variant, the number's low 20 bits, the statement's 40 random bits
    "(SELECT x'8000000000000000'::bigint | ('x' || substr(replace(gen_random_uuid()::text, '-',"
    f" ''), 23, 10))::bit(40)::bigint) | (({_N} & 1048575) << 40)"
)
_UUID7_ORDERED_POSTGRESQL = f"encode(int8send({_HIGH}) || int8send({_LOW}), 'hex')::uuid"
# SQLite: the function every connection is given (core/exact.py registers it).
UUID7_SQL_SQLITE = "uuid7()"


_MS = (1 << 48) - 1
_LOW62 = (1 << 62) - 1
_VERSION_VARIANT = 0x7 << 76 | 0b10 << 62
# Random bytes are drawn from the system a page at a time (one getrandom() per 409 keys):
# os.urandom releases the GIL, and taking it back while another thread runs (a sync's
# read-ahead decoding the next account, the server of a test) cost 65-85 us a call where
# the key itself takes 1.4 us.
_POOL_BYTES = 4090


class _Pool(threading.local):
    """Each thread's own unread random bytes (a thread never hands out another's)."""

    def __init__(self) -> None:
        self.data, self.at = b"", 0


_pool = _Pool()
# A forked child starts with none: it must never repeat the bytes its parent hands out next.
os.register_at_fork(after_in_child=_pool.__init__)


def _random80() -> int:
    pool = _pool
    at = pool.at
    if at + 10 > len(pool.data):
        pool.data, at = os.urandom(_POOL_BYTES), 0
    pool.at = at + 10
    return int.from_bytes(pool.data[at : at + 10], "big")


def _time_bits() -> int:
    """The key's top: 48 bits of Unix time in ms, then the version (and the variant below)."""
    return (time.time_ns() // 1_000_000 & _MS) << 80 | _VERSION_VARIANT


def _random_bits(rand: int) -> int:
    """74 of 80 random bits in the places around the version and the variant."""
    return (rand >> 62 & 0xFFF) << 64 | rand & _LOW62


def _uuid7_int() -> int:
    """48 bits of Unix time in ms, version, 74 random bits, variant (SQLite calls this once
    per row an INSERT ... SELECT keys, 50,000 times for a 50k-row import)."""
    return _time_bits() | _random_bits(_random80())


def uuid7() -> uuid.UUID:
    """A new version-7 key: 48 bits of Unix time in ms, version, 74 random bits, variant."""
    return uuid.UUID(int=_uuid7_int())


def uuid7_batch(count: int) -> list[uuid.UUID]:
    """`count` new version-7 keys for the rows of one write (a sync's new rows of an account):
    one reading of the clock and one draw of random bytes for all of them, where a key each
    read both (and gave up the interpreter lock to the system once per 409 keys, to wait for
    it back behind a busy read-ahead thread)."""
    high, data = _time_bits(), os.urandom(10 * count)
    take = int.from_bytes
    return [
        uuid.UUID(int=high | _random_bits(take(data[at : at + 10], "big")))
        for at in range(0, 10 * count, 10)
    ]


def uuid7_hex() -> str:
    """`uuid7()` as the 32 hex digits a UUIDField stores on SQLite, without building a UUID
    (SQLite's `uuid7()` function, core/exact.py: 2.3 -> 1.3 us a key)."""
    return f"{_uuid7_int():032x}"


def uuid7_sql(vendor: str, order: str) -> str:
    """SQL that makes a new version-7 key for each row of a SELECT on `vendor`'s database (as
    the text a UUIDField stores there), rising in the order `order` (an ORDER BY list, which
    the SELECT should also be ordered by: its rows are then sorted once)."""
    if vendor == "postgresql":
        return _UUID7_ORDERED_POSTGRESQL.format(order=order)
    return UUID7_SQL_SQLITE  # from the clock, a key a row (SQLite calls Python per row)
