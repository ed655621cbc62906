"""Scale: the streamed, batched path end to end (small here; 1,000,000 rows behind `slow`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from finance.models import Transaction
from imports.models import Import

pytestmark = pytest.mark.django_db


def test_bench_command_imports_verifies_and_queries_do_not_grow_per_row():
    out = StringIO()
    with CaptureQueriesContext(connection) as small:
        call_command("import_bench", rows=2000, stdout=out)
    figures = json.loads(out.getvalue())
    assert figures["status"] == "complete" and figures["readback"] == "matched"
    imp = Import.objects.get()
    assert Transaction.objects.filter(import_id=imp.pk).count() == 2000
    out = StringIO()
    with CaptureQueriesContext(connection) as large:
        call_command("import_bench", rows=12000, stdout=out)
    # Six times the rows: only the batch count grows (one INSERT per 5,000 rows per table).
    assert len(large.captured_queries) <= len(small.captured_queries) + 12


def test_import_csv_command(alice, tmp_path):
    account = alice.account(currency="EUR")
    path = tmp_path / "bank.csv"
    path.write_bytes("Datum;Name;Betrag\n01.02.2024;Bäcker;-3,20\n".encode("cp1252"))
    out, err = StringIO(), StringIO()
    call_command(
        "import_csv",
        str(path),
        "--account",
        str(account.pk),
        "--date-col-label",
        "Datum",
        "--amount-col-label",
        "Betrag",
        "--date-format",
        "%d.%m.%Y",
        "--number-format",
        "1.234,56",
        stdout=out,
        stderr=err,
    )
    assert "readback matched" in out.getvalue()
    assert Transaction.objects.get(account=account).name == "Bäcker"
    assert "parse [" not in err.getvalue() and "publish [" in err.getvalue()  # progress bars


def test_import_csv_command_is_import_file_for_one_account_and_csv(alice, tmp_path):
    account = alice.account(currency="EUR")
    # an OFX-looking name: import_csv reads it as a CSV all the same (no format recognition)
    path = tmp_path / "bank.ofx"
    path.write_text("date,name,amount\n2024-02-01,Baker,-3.20\n")
    out, err = StringIO(), StringIO()
    args = (str(path), "--account", str(account.pk), "--no-publish")
    call_command("import_csv", *args, stdout=out, stderr=err)
    imp = Import.objects.get()
    assert imp.type == Import.Type.TRANSACTION and imp.stats["rows_count"] == 1
    assert "1 rows, 0 invalid" in out.getvalue() and "publish" not in out.getvalue()
    assert not Transaction.objects.filter(account=account).exists()
    with pytest.raises(CommandError, match="--account"):
        call_command("import_csv", str(path), stdout=out, stderr=err)
    with pytest.raises(CommandError, match="no account with id"):
        call_command("import_csv", str(path), "--account", str(uuid.uuid4()), stdout=out)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("IMPORT_BENCH_ROWS"), reason="set IMPORT_BENCH_ROWS=1000000")
def test_million_rows_within_memory_bound(tmp_path):
    """Runs `import_bench` in a fresh process on a fresh SQLite file and checks peak RSS."""
    rows = int(os.environ["IMPORT_BENCH_ROWS"])
    env = {
        **os.environ,
        "DATA_DIR": str(tmp_path),
        "SQLITE_PATH": str(tmp_path / "db.sqlite3"),
        "MEDIA_ROOT": str(tmp_path / "media"),
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
    }
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True)
    result = subprocess.run(
        [*manage, "import_bench", "--rows", str(rows)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    figures = json.loads(result.stdout)
    print(figures)
    assert figures["readback"] == "matched"
    assert figures["peak_rss_mb"] < 300


def test_published_rows_have_time_ordered_keys_in_date_order(alice, tmp_path):
    """The one-statement publish gives each row a version-7 key (core/keys.py) and inserts an
    account's rows newest date first, so their keys follow that order."""
    account = alice.account(currency="EUR")
    path = tmp_path / "bank.csv"
    lines = ["date,name,amount"] + [f"2024-02-{day:02d},Shop {day},-{day}.50" for day in (3, 1, 2)]
    path.write_text("\n".join(lines) + "\n")
    call_command("import_csv", str(path), "--account", str(account.pk), stdout=StringIO())
    rows = list(Transaction.objects.filter(account=account).order_by("-date"))
    assert [r.date.day for r in rows] == [3, 2, 1]
    assert {r.id.version for r in rows} == {7}
    # Newest date inserted first; keys made within one millisecond may tie on time only.
    stamps = [r.id.int >> 80 for r in rows]
    assert stamps == sorted(stamps)
    if connection.vendor == "postgresql":
        # One statement's keys: its time, then the rows' numbers in the order written.
        assert [r.id.int for r in rows] == sorted(r.id.int for r in rows)
        assert len({r.id.int >> 80 for r in rows}) == 1


def test_two_publishes_keys_differ_in_their_statements_random_bits(alice, tmp_path):
    """Each one-statement publish draws its own random bits (PostgreSQL: once a statement, the
    rows told apart by their number; SQLite: a key a row): two files published one after the
    other never share a key, whatever their millisecond."""
    account = alice.account(currency="EUR")
    keys = []
    for n in range(2):
        path = tmp_path / f"bank{n}.csv"
        lines = ["date,name,amount"] + [
            f"2024-03-{day:02d},Shop {n}-{day},-{day}.25" for day in range(1, 29)
        ]
        path.write_text("\n".join(lines) + "\n")
        call_command("import_csv", str(path), "--account", str(account.pk), stdout=StringIO())
        keys.append(
            {
                t.id
                for t in Transaction.objects.filter(account=account, name__startswith=f"Shop {n}-")
            }
        )
    assert len(keys[0]) == len(keys[1]) == 28 and not keys[0] & keys[1]
    low40 = [{k.int & ((1 << 40) - 1) for k in ks} for ks in keys]
    assert not low40[0] & low40[1]
    assert {k.version for k in keys[0] | keys[1]} == {7}
    assert {k.variant for k in keys[0] | keys[1]} == {uuid.RFC_4122}


def test_uuid7_layout():
    from core.keys import uuid7

    keys = [uuid7() for _ in range(50)]
    assert {k.version for k in keys} == {7} and len(set(keys)) == 50
    assert {k.variant for k in keys} == {uuid.RFC_4122}
    assert [k.int >> 80 for k in keys] == sorted(k.int >> 80 for k in keys)


def test_uuid7_hex_is_a_uuid7_key_as_sqlite_stores_it():
    """`uuid7_hex` (SQLite's `uuid7()`, which keys the one-statement publish) builds the key
    without a UUID object: the same layout as `uuid7`, 32 lowercase hex digits."""
    from core.keys import uuid7, uuid7_hex

    before = uuid7().int >> 80
    texts = [uuid7_hex() for _ in range(200)]
    after = uuid7().int >> 80
    keys = [uuid.UUID(hex=t) for t in texts]
    assert all(len(t) == 32 and t == t.lower() and k.hex == t for t, k in zip(texts, keys))
    assert {k.version for k in keys} == {7} and len(set(keys)) == 200
    assert {k.variant for k in keys} == {uuid.RFC_4122}
    stamps = [k.int >> 80 for k in keys]
    assert stamps == sorted(stamps) and before <= stamps[0] and stamps[-1] <= after
    # The 74 random bits vary (not a counter nor a constant).
    assert len({k.int & ((1 << 62) - 1) for k in keys}) == 200
    assert len({(k.int >> 64) & 0xFFF for k in keys}) > 100
