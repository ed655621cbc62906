"""Trigram indexes for `?search=` on PostgreSQL (case-insensitive substring match on a
transaction's name and notes). SQLite has no such index; its search stays a scan."""

from django.db import migrations

INDEXES = {
    "txn_name_trgm": "UPPER((name)::text)",
    "txn_notes_trgm": "UPPER((notes)::text)",
}


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, expression in INDEXES.items():
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON finance_transaction "
            f"USING gin ({expression} gin_trgm_ops)"
        )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("finance", "0002_transaction_list_indexes")]

    operations = [migrations.RunPython(forwards, backwards)]
