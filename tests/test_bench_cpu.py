"""The bench's CPU accounting (bench/cpu.py): each side's seconds, and the bound they set."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from bench.cpu import CpuMeter, CpuSample, child_pids, process_cpu

linux = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux's /proc")


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


@linux
def test_our_cpu_and_another_process_are_counted():
    child = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.process_time() + 0.3\n"
         "while time.process_time() < end: pass\ntime.sleep(30)"],
    )  # fmt: skip
    try:
        with CpuMeter([child.pid], database=False) as meter:
            _burn(0.2)
            deadline = time.monotonic() + 10
            while (process_cpu(child.pid) or 0) < 0.3 and time.monotonic() < deadline:
                time.sleep(0.05)
        assert child.pid in child_pids(os.getpid())
    finally:
        child.kill()
        child.wait()
    sample = meter.sample
    assert sample.ours >= 0.19
    assert sample.others is not None and sample.others >= 0.25
    assert sample.database is None
    assert sample.busiest >= 0.25


@linux
@pytest.mark.django_db
def test_the_database_servers_cpu_is_counted_on_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite runs inside this process")
    with CpuMeter() as meter, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM generate_series(1, 4000000)")
    sample = meter.sample
    assert sample.database is not None and sample.database >= 0.1, sample
    assert sample.busiest >= 0.1, sample  # the one backend that ran it


def test_the_bound_is_the_busiest_process_or_all_of_it_over_the_cores():
    one_side = CpuSample(ours=3.0, others=None, database=1.0, cores=2, busiest=3.0)
    assert one_side.bound() == 3.0  # our process alone
    spread = CpuSample(ours=2.0, others=None, database=3.0, cores=2, busiest=3.0)
    assert spread.bound() == 3.0  # the database backend alone
    even = CpuSample(ours=2.0, others=2.0, database=2.0, cores=2, busiest=1.0)
    assert even.bound() == 3.0  # six seconds over two cores
    assert even.columns(floor=1.5) == {
        "our_cpu_s": 2.0, "server_cpu_s": 2.0, "db_cpu_s": 2.0, "cpu_bound_x": 2.0,
    }  # fmt: skip
