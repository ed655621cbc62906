"""PostgreSQL: an import row's key to its import is checked once per statement instead of once
per row (core/statement_keys.py; docs/decisions.md, "Foreign keys checked once per
statement"). Outside Django's state, as finance 0016 and 0020 are."""

from django.db import migrations

from core.statement_keys import StatementKey, statement_keys_operation

KEYS = (
    StatementKey("importrow_import_fk", "imports_importrow", ("data_import_id",), "imports_import"),
)



class Migration(migrations.Migration):
    dependencies = [("imports", "0007_import_rows_from")]

    operations = [statement_keys_operation(KEYS)]
