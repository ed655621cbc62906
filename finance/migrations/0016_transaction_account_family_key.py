"""PostgreSQL: one foreign key from a transaction to its account *and* household, in place of
the two Django made (docs/decisions.md, "One key for a row's account and household").

A transaction's household is a copy of its account's (every list filters that one column).
The two single-column keys checked that each existed, at 3 us a row each at COMMIT; the
composite key (account_id, family_id) -> finance_account (id, family_id) checks both at once
and also that they belong together, which nothing in the database held before: a row can no
longer sit in one household while its account is another's.

Done by hand, outside Django's state: the model keeps its two ForeignKeys (the ORM, the
admin and SQLite are unchanged; SQLite keeps its plain keys, and letting AlterField drop them
would remake its table and lose its triggers). Adding the key checks every stored row: a row
whose household is not its account's stops the migration (there should be none)."""

from django.db import migrations

TABLE = "finance_transaction"
UNIQUE = "account_id_family_key"
COMPOSITE = "txn_account_family_fk"


def _single_keys(schema_editor) -> list[str]:
    """Names of the one-column foreign keys of finance_transaction.account_id / family_id."""
    with schema_editor.connection.cursor() as cursor:
        constraints = schema_editor.connection.introspection.get_constraints(cursor, TABLE)
    return [
        name
        for name, info in constraints.items()
        if info["foreign_key"] and info["columns"] in (["account_id"], ["family_id"])
    ]


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    qn = schema_editor.quote_name
    schema_editor.execute(
        f"ALTER TABLE finance_account ADD CONSTRAINT {qn(UNIQUE)} UNIQUE (id, family_id)"
    )
    for name in _single_keys(schema_editor):
        schema_editor.execute(f"ALTER TABLE {TABLE} DROP CONSTRAINT {qn(name)}")
    schema_editor.execute(
        f"ALTER TABLE {TABLE} ADD CONSTRAINT {qn(COMPOSITE)} FOREIGN KEY (account_id, family_id) "
        "REFERENCES finance_account (id, family_id) DEFERRABLE INITIALLY DEFERRED"
    )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    qn = schema_editor.quote_name
    schema_editor.execute(f"ALTER TABLE {TABLE} DROP CONSTRAINT {qn(COMPOSITE)}")
    model = apps.get_model("finance", "Transaction")
    for name in ("account", "family"):
        field = model._meta.get_field(name)
        schema_editor.execute(
            schema_editor._create_fk_sql(model, field, "_fk_%(to_table)s_%(to_column)s")
        )
    schema_editor.execute(f"ALTER TABLE finance_account DROP CONSTRAINT {qn(UNIQUE)}")


class Migration(migrations.Migration):
    dependencies = [("finance", "0015_provider_snapshot_hash")]

    operations = [migrations.RunPython(forwards, backwards)]
