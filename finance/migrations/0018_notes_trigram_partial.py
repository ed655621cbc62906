"""The notes trigram index (migration 0003) leaves out the rows without notes. A GIN index keeps
an entry for every NULL, and most rows from banks and imports have no notes: 50,000 rows of
which two in three have none were COPYed in 0.39 s with the full index, 0.31 s with this one,
0.17 s with none (bench/README.md). A search's `UPPER(notes) LIKE ...` implies the predicate
(LIKE and UPPER are strict), so the planner still uses it. PostgreSQL only; the index is built
again once, about 10 s per 1M rows."""

from django.db import migrations

FULL = (
    "CREATE INDEX txn_notes_trgm ON finance_transaction "
    "USING gin (UPPER((notes)::text) gin_trgm_ops)"
)
PARTIAL = FULL + " WHERE notes IS NOT NULL"


def _replace(schema_editor, create: str) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP INDEX IF EXISTS txn_notes_trgm")
    schema_editor.execute(create)


def forwards(apps, schema_editor):
    _replace(schema_editor, PARTIAL)


def backwards(apps, schema_editor):
    _replace(schema_editor, FULL)


class Migration(migrations.Migration):
    dependencies = [("finance", "0017_category_merchant_order_household")]

    operations = [migrations.RunPython(forwards, backwards)]
