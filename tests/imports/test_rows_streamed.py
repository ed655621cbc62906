"""A file's import rows stream through one COPY kept open for the whole file on PostgreSQL
(imports/services/rows.py, finance/ledger/db/fastinsert.StreamedInsert): the server stores a
batch while the next is read. Every row lands once with its values; a batch whose values need
another COPY format starts another; an error part way keeps none and leaves the connection
able to roll back and go on."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection, transaction

from imports.models import Import, ImportRow
from imports.services.rows import BATCH_SIZE, RowWriter

pytestmark = pytest.mark.django_db


def _row(imp: Import, number: int, amount: object = None) -> tuple:
    amount = Decimal(number) / 100 if amount is None else amount
    return (
        imp.pk, number, [f"cell {number}"], None, amount, "EUR", f"Shop {number}", "", ["a"],
        "", "", None, True, [], 1, f"fp-{number}",
    )  # fmt: skip


def _in_copy() -> bool:
    if connection.vendor != "postgresql":
        return False
    from psycopg.pq import TransactionStatus

    return connection.connection.info.transaction_status == TransactionStatus.ACTIVE


def test_several_batches_stream_through_one_copy_and_land_once(alice):
    imp = Import.objects.create(family=alice.family, configuration={})
    pg = connection.vendor == "postgresql"
    total = 2 * BATCH_SIZE + 3
    with transaction.atomic(), RowWriter() as rows:
        for number in range(total):
            rows.add(_row(imp, number))
            if number == 2 * BATCH_SIZE - 1:
                # Two batches sent, the COPY still open (PostgreSQL): none of them waited.
                assert _in_copy() is pg
        assert rows.finish() == total
        assert not _in_copy()
        stored = dict(ImportRow.objects.filter(data_import=imp).values_list("row_number", "amount"))
    assert stored == {n: Decimal(n) / 100 for n in range(total)}


def test_a_batch_needing_another_format_starts_another_copy(alice):
    imp = Import.objects.create(family=alice.family, configuration={})
    with transaction.atomic(), RowWriter() as rows:
        for number in range(BATCH_SIZE):
            rows.add(_row(imp, number))  # amounts as Decimals: the binary format
        for number in range(BATCH_SIZE, BATCH_SIZE + 40):
            rows.add(_row(imp, number, amount=f"{number}.25"))  # as text: the text format
    amounts = dict(ImportRow.objects.filter(data_import=imp).values_list("row_number", "amount"))
    assert len(amounts) == BATCH_SIZE + 40
    assert amounts[7] == Decimal("0.07") and amounts[BATCH_SIZE + 1] == Decimal(
        f"{BATCH_SIZE + 1}.25"
    )


def test_an_error_while_streaming_keeps_none_and_the_connection_goes_on(alice):
    imp = Import.objects.create(family=alice.family, configuration={})
    with (
        pytest.raises(ValueError, match="the file broke"),
        transaction.atomic(),
        RowWriter() as rows,
    ):
        for number in range(BATCH_SIZE + BATCH_SIZE // 2):
            rows.add(_row(imp, number))
        raise ValueError("the file broke")
    assert not _in_copy()
    assert not ImportRow.objects.filter(data_import=imp).exists()
    with transaction.atomic(), RowWriter() as rows:  # the next file streams as before
        rows.add(_row(imp, 1))
    assert ImportRow.objects.filter(data_import=imp).count() == 1
