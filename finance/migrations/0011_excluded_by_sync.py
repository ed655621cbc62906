"""Who excluded a row (the sync lifts only its own exclusion), and whether a posted provider row
is already the posted version of a pending row (decisions.md, "Sync rules").

On SQLite Django would rebuild the transaction table to add a NOT NULL column, which the
triggers of other tables that name it forbid; a plain `ADD COLUMN` with a constant default
needs no rebuild there (nor on PostgreSQL, where the constant default costs no table rewrite).
The column default also serves writers that name their columns (none of ours omit these)."""

from django.db import migrations, models

FIELDS = ("excluded_by_sync", "pending_settled")


def forwards(apps, schema_editor):
    sqlite = schema_editor.connection.vendor == "sqlite"
    for name in FIELDS:
        kind, default = ("bool", "0") if sqlite else ("boolean", "false")
        schema_editor.execute(
            f'ALTER TABLE "finance_transaction" ADD COLUMN "{name}" {kind} NOT NULL '
            f"DEFAULT {default}"
        )


def backwards(apps, schema_editor):
    for name in FIELDS:
        schema_editor.execute(f'ALTER TABLE "finance_transaction" DROP COLUMN "{name}"')


class Migration(migrations.Migration):
    dependencies = [
        ("finance", "0010_account_holdings_value"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="transaction",
                    name=name,
                    field=models.BooleanField(default=False),
                )
                for name in FIELDS
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
