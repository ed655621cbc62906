"""A file of more than one batch (imports/services/rows.py, BATCH_SIZE) is written batch by
batch as it is read: every row lands once, in order, with its duplicate marks; a file that fails
part way, or a batch the database refuses, leaves no row of the file."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from finance.models import Transaction
from imports.models import Import, ImportRow
from imports.services.rows import BATCH_SIZE, RowWriter
from tests.imports.statement_helpers import publish, upload, uploaded

pytestmark = pytest.mark.django_db
ROWS = 2 * BATCH_SIZE + 7  # two full batches, the rest written by finish()


def _csv(rows: int) -> bytes:
    lines = ["date,name,amount"]
    lines += [
        f"2024-{1 + i % 12:02d}-{1 + i % 28:02d},Shop {i % 50},-{1 + i % 900}.25"
        for i in range(rows)
    ]
    return ("\n".join(lines) + "\n").encode()


def _qif(records: int, tail: str = "") -> bytes:
    body = "".join(
        f"D01/{1 + i % 28:02d}/2024\nT-{1 + i % 90}.50\nPShop {i}\n^\n" for i in range(records)
    )
    return ("!Type:Bank\n" + body + tail).encode()


def test_a_file_of_several_batches_lands_whole_and_its_reimport_is_marked(
    alice, django_capture_on_commit_callbacks
):
    account = alice.account(currency="USD")
    content = _csv(ROWS)
    first = uploaded(
        alice.client, content, "big.csv", "TransactionImport", account_id=str(account.pk)
    )
    rows = ImportRow.objects.filter(data_import_id=first["id"])
    assert rows.count() == ROWS
    numbers = list(rows.order_by("row_number").values_list("row_number", flat=True))
    assert numbers == list(range(2, ROWS + 2))  # every line once: none lost, none twice
    last = rows.get(row_number=ROWS + 1)
    assert (last.name, str(last.amount)) == (
        f"Shop {(ROWS - 1) % 50}",
        f"{1 + (ROWS - 1) % 900}.2500",  # inflows positive: the file's minus is spending
    )
    assert publish(alice.client, first["id"], django_capture_on_commit_callbacks)["status"] == (
        "complete"
    )
    assert Transaction.objects.filter(account=account).count() == ROWS

    # The same rows and one more (another file: parsed, not borrowed): the marks are looked
    # up batch by batch.
    longer = content + b"2024-03-03,New shop,-1.00\n"
    again = uploaded(
        alice.client, longer, "big2.csv", "TransactionImport", account_id=str(account.pk)
    )
    again_rows = ImportRow.objects.filter(data_import_id=again["id"])
    assert again_rows.count() == ROWS + 1
    marked = again_rows.filter(duplicate=True)
    assert marked.count() == ROWS
    assert marked.filter(duplicate_of__isnull=True).count() == 0
    assert again_rows.get(duplicate=False).name == "New shop"


def test_a_statement_file_failing_after_batches_were_written_keeps_no_row(alice):
    account = alice.account(currency="USD")
    records = 2 * BATCH_SIZE + 3
    broken_line = 4 * records + 2  # the header, four lines per record, then this one
    resp = upload(
        alice.client,
        _qif(records, "Zbroken\n"),
        "late.qif",
        "QifImport",
        account_id=str(account.pk),
    )
    assert resp.status_code == 201, resp.content
    data = resp.json()["data"]
    assert data["status"] == "failed"
    assert f"line {broken_line}" in data["error"], data["error"]
    assert not ImportRow.objects.filter(data_import_id=data["id"]).exists()

    whole = uploaded(
        alice.client, _qif(records), "whole.qif", "QifImport", account_id=str(account.pk)
    )
    assert ImportRow.objects.filter(data_import_id=whole["id"]).count() == records


def _row(imp: Import, number: int) -> tuple:
    return (imp.pk, number, [], None, None, "", "", "", [], "", "", None, False, ["x"], 1, "")


def test_a_batch_the_database_refuses_raises_and_keeps_none_of_the_file(alice):
    imp = Import.objects.create(family=alice.family, configuration={})
    progress: list[int] = []
    refused = (IntegrityError, connection.Database.IntegrityError)  # COPY's own, on PostgreSQL
    with pytest.raises(refused), transaction.atomic():
        writer = RowWriter(on_progress=progress.append)
        for number in range(BATCH_SIZE):
            writer.add(_row(imp, number))  # the first batch: written
        for number in range(BATCH_SIZE):
            writer.add(_row(imp, 1))  # the second repeats a row number: refused
        writer.finish()
    # Counted as each batch goes. On PostgreSQL the batches stream through one COPY and the
    # server's refusal comes when the rows are finished; elsewhere with the batch refused.
    sent = [BATCH_SIZE, 2 * BATCH_SIZE] if connection.vendor == "postgresql" else [BATCH_SIZE]
    assert progress == sent
    assert not ImportRow.objects.filter(data_import=imp).exists()
