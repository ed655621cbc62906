"""CPU time each side of a measured step spends: this process (all its threads), other
processes of ours (the gunicorn workers of the create workload) and the database server
(every PostgreSQL process on this machine: the backends and their helpers; SQLite runs inside
this process). Read from Linux's /proc; elsewhere `database` and `others` are None.

Wall time can never be below what the busiest thread of any process needs alone (a database
backend serves its one connection on one core; SQLite runs in the thread that calls it), nor
below all sides' CPU spread over every core. `CpuSample.bound` is that lower bound: with a
step's floor it says how far the measured ratio is from what any schedule of the same work
could reach on this machine (docs/decisions.md, "Each side's CPU in the bench"). Our Python
threads also share one interpreter lock, which this bound leaves out. A thread or process that
starts and ends inside the step (a read-ahead worker, an autovacuum worker) counts in the
totals where the system still counts it, never in the busiest: the figures are lower bounds."""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_PROC = Path("/proc")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(path: Path) -> list[str] | None:
    """A /proc stat file's fields after the command name (which may hold spaces), or None."""
    try:
        return path.read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _stat_cpu(path: Path) -> float | None:
    fields = _stat(path)
    return None if fields is None else (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime


def _pids() -> list[int]:
    """Every process on this machine (none where /proc is not there)."""
    return [int(e.name) for e in _PROC.iterdir() if e.name.isdigit()] if _PROC.is_dir() else []


def process_cpu(pid: int) -> float | None:
    """User + system seconds of process `pid` (all its threads), or None if unreadable."""
    return _stat_cpu(_PROC / str(pid) / "stat")


def child_pids(parent: int) -> list[int]:
    """The processes whose parent is `parent` (a gunicorn master's workers)."""
    return [
        pid
        for pid in _pids()
        if (fields := _stat(_PROC / str(pid) / "stat")) is not None and int(fields[1]) == parent
    ]


def postgres_pids() -> list[int]:
    """The PostgreSQL server's processes on this machine (none where /proc is not there)."""
    pids = []
    for pid in _pids():
        try:
            if (_PROC / str(pid) / "comm").read_text().strip() == "postgres":
                pids.append(pid)
        except OSError:
            continue
    return pids


def _own() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _own_threads() -> dict[int, float]:
    """This process's live threads: thread id -> its CPU seconds."""
    tasks = _PROC / "self" / "task"
    if not tasks.is_dir():
        return {}
    cpu = {int(entry.name): _stat_cpu(entry / "stat") for entry in tasks.iterdir()}
    return {tid: secs for tid, secs in cpu.items() if secs is not None}


def cpu_of(pids: list[int]) -> dict[int, float]:
    """pid -> CPU seconds so far, for each of `pids` still there."""
    return {pid: cpu for pid in pids if (cpu := process_cpu(pid)) is not None}


def spent(before: dict[int, float], after: dict[int, float]) -> list[float]:
    """Each process's CPU between two readings (one born in between counts from zero)."""
    return [cpu - before.get(pid, 0.0) for pid, cpu in after.items()]


@dataclass
class CpuSample:
    """CPU seconds of a step: ours (this process), others (given processes), database."""

    ours: float
    others: float | None
    database: float | None
    cores: int
    busiest: float  # the most any one thread spent (of ours, of the others, of one backend)

    @property
    def total(self) -> float:
        """Every side's CPU seconds together."""
        return self.ours + (self.others or 0.0) + (self.database or 0.0)

    def bound(self) -> float:
        """The least wall time the step's CPU allows: the busiest thread alone, or all of it
        spread over every core."""
        return max(self.busiest, self.total / self.cores)

    def columns(self, floor: float | None = None) -> dict[str, Any]:
        """Report columns: each side's seconds and, with the step's floor, the bound's ratio."""
        out: dict[str, Any] = {"our_cpu_s": round(self.ours, 2)}
        if self.others is not None:
            out["server_cpu_s"] = round(self.others, 2)
        out["db_cpu_s"] = "" if self.database is None else round(self.database, 2)
        if floor:
            out["cpu_bound_x"] = round(self.bound() / floor, 2)
        return out


class CpuMeter:
    """with CpuMeter(pids=[...]) as meter: ...  then meter.sample (a CpuSample).
    `pids`: other processes of ours to count (their CPU while the block ran)."""

    def __init__(self, pids: list[int] | None = None, *, database: bool = True) -> None:
        """`database`: count the PostgreSQL server's processes (False on SQLite, which runs
        in this process)."""
        self._pids = list(pids or [])
        self._database = database
        self.sample: CpuSample | None = None

    def __enter__(self) -> CpuMeter:
        self._own, self._threads = _own(), _own_threads()
        self._others = cpu_of(self._pids)
        self._db = cpu_of(postgres_pids()) if self._database else {}
        return self

    def __exit__(self, *exc: object) -> None:
        ours = _own() - self._own
        busiest = spent(self._threads, _own_threads()) or [ours]
        others = None
        if self._pids:
            deltas = spent(self._others, cpu_of(self._pids))
            others, busiest = sum(deltas), busiest + deltas
        database = None
        if self._database and _PROC.is_dir():
            # processes gone meanwhile are lost; ones started meanwhile count whole
            deltas = spent(self._db, cpu_of(postgres_pids()))
            database, busiest = sum(deltas), busiest + deltas
        # (the others and the backends are single-threaded processes, or counted as one)
        self.sample = CpuSample(ours, others, database, os.cpu_count() or 1, max(busiest))


def cpu_meter(pids: list[int] | None = None) -> CpuMeter:
    """A `CpuMeter` that counts PostgreSQL's processes when the workload's database is
    PostgreSQL (SQLite runs in this process)."""
    from bench.common import vendor

    return CpuMeter(pids, database=vendor() == "postgresql")
