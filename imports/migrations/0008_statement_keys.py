"""PostgreSQL: an import row's key to its import is checked once per statement instead of once
per row (core/statement_keys.py; docs/decisions.md, "Foreign keys checked once per
statement"). Outside Django's state, as finance 0016 and 0020 are."""

from django.db import migrations

from core.statement_keys import StatementKey, statement_keys_install, statement_keys_uninstall

KEYS = (
    StatementKey("importrow_import_fk", "imports_importrow", ("data_import_id",), "imports_import"),
)


def forwards(apps, schema_editor):
    statement_keys_install(schema_editor, KEYS)


def backwards(apps, schema_editor):
    statement_keys_uninstall(schema_editor, KEYS)


class Migration(migrations.Migration):
    dependencies = [("imports", "0007_import_rows_from")]

    operations = [migrations.RunPython(forwards, backwards)]
