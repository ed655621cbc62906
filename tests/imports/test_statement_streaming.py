"""Statement files are read as streams: the memory a reader holds does not grow with the number
of entries (each CAMT entry is cleared once read, OFX is read through a window). Measured in a
fresh process (peak RSS); a million entries behind IMPORT_BENCH_ROWS through import_bench."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READER = """
import re, sys
from imports.bench_files import write_camt053, write_ofx

def peak_kb():
    # VmHWM, not ru_maxrss: a child keeps its parent's ru_maxrss across exec.
    with open("/proc/self/status") as fh:
        return int(re.search(r"VmHWM:\\s+(\\d+)", fh.read())[1])


kind, rows, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
(write_camt053 if kind == "camt053" else write_ofx)(path, rows)
from imports.parsing.camt import read_camt053
from imports.parsing.ofx import read_ofx
read = read_camt053 if kind == "camt053" else read_ofx
with open(path, "rb") as stream:
    items = read(stream, default_currency="EUR").items
    first = next(items)
    base = peak_kb()
    count = 1 + sum(1 for _ in items)
grown = peak_kb() - base
print(count, grown // 1024)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's VmHWM")
@pytest.mark.parametrize("kind", ["camt053", "ofx"])
def test_reading_does_not_hold_the_entries(kind, tmp_path):
    rows = 20_000  # a tree kept whole would grow by about 60 MB here
    result = subprocess.run(
        [sys.executable, "-c", READER, kind, str(rows), str(tmp_path / f"big.{kind}")],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    count, grown_mb = map(int, result.stdout.split())
    assert count == rows + 1  # the entries and their statement
    assert grown_mb < 20, f"peak memory grew by {grown_mb} MB while reading {rows} entries"


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("IMPORT_BENCH_ROWS"), reason="set IMPORT_BENCH_ROWS=1000000")
@pytest.mark.parametrize("kind", ["camt053", "ofx"])
def test_million_entry_statement_file_parses_within_memory_bound(kind, tmp_path):
    env = {
        **os.environ,
        "DATA_DIR": str(tmp_path),
        "SQLITE_PATH": str(tmp_path / "db.sqlite3"),
        "MEDIA_ROOT": str(tmp_path / "media"),
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
    }
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
    rows = os.environ["IMPORT_BENCH_ROWS"]
    result = subprocess.run(
        [*manage, "import_bench", "--rows", rows, "--format", kind, "--parse-only"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    figures = json.loads(result.stdout)
    print(figures)
    assert figures["invalid_rows"] == 0 and figures["error"] is None
    assert figures["peak_rss_mb"] < 300
