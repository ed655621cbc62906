"""A transaction's key defaults to a time-ordered one (core/keys.py). The default lives in
Python only, so nothing changes in the database: state only (SQLite's schema editor would
otherwise rebuild the whole ledger table, and with it drop the triggers made by RunSQL)."""

from django.db import migrations, models

import core.keys


class Migration(migrations.Migration):
    dependencies = [
        ("finance", "0018_notes_trigram_partial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="transaction",
                    name="id",
                    field=models.UUIDField(
                        default=core.keys.uuid7, editable=False, primary_key=True, serialize=False
                    ),
                ),
            ],
        ),
    ]
