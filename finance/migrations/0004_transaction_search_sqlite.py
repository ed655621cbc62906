"""An FTS5 trigram index for `?search=` on SQLite (finance/search_sqlite.py). PostgreSQL has
its trigram indexes from 0003; there this migration does nothing."""

from django.db import migrations


def forwards(apps, schema_editor):
    from finance.ledger.db.search_sqlite import search_index_ensure

    search_index_ensure(using=schema_editor.connection.alias)


def backwards(apps, schema_editor):
    from finance.ledger.db.search_sqlite import search_index_drop

    search_index_drop(using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [("finance", "0003_transaction_search_trigram")]

    operations = [migrations.RunPython(forwards, backwards)]
