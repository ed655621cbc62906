"""Decimal columns exact on SQLite: TEXT columns of canonical strings (core/exact.py,
docs/decisions.md "Exact money on SQLite"). No SQL on PostgreSQL (numeric(p, s) as before).

On SQLite Django rebuilds each altered table, and the tag links' triggers that name
finance_transaction forbid rebuilding it: they are dropped first, and recreated (their copies
repaired) after the migrate with the ledger's other triggers (finance/apps.py)."""

import core.bounds
import core.exact
from django.db import migrations


TAG_LINK_TRIGGERS = ("finance_txn_tag_copy", "finance_txn_tag_copy_moved", "finance_txn_tag_follow")


def drop_tag_link_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for name in TAG_LINK_TRIGGERS:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [
        ("finance", "0012_rules"),
    ]

    operations = [
        migrations.RunPython(drop_tag_link_triggers, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="account",
            name="balance",
            field=core.exact.ExactDecimalField(decimal_places=4, default=0, max_digits=38),
        ),
        migrations.AlterField(
            model_name="account",
            name="holdings_value",
            field=core.exact.ExactDecimalField(
                blank=True, decimal_places=4, max_digits=38, null=True
            ),
        ),
        migrations.AlterField(
            model_name="account",
            name="opening_balance",
            field=core.exact.ExactDecimalField(
                blank=True, decimal_places=4, max_digits=38, null=True
            ),
        ),
        migrations.AlterField(
            model_name="account",
            name="reported_balance",
            field=core.exact.ExactDecimalField(
                blank=True, decimal_places=4, max_digits=38, null=True
            ),
        ),
        migrations.AlterField(
            model_name="accountbalance",
            name="balance",
            field=core.exact.ExactDecimalField(decimal_places=4, max_digits=38),
        ),
        migrations.AlterField(
            model_name="exchangerate",
            name="rate",
            field=core.exact.ExactDecimalField(decimal_places=10, max_digits=24),
        ),
        migrations.AlterField(
            model_name="transaction",
            name="amount",
            field=core.exact.ExactDecimalField(
                decimal_places=4, max_digits=19, validators=[core.bounds.validate_amount]
            ),
        ),
        core.exact.sqlite_text_columns(
            [
                ("finance_account", "balance", 4),
                ("finance_account", "holdings_value", 4),
                ("finance_account", "opening_balance", 4),
                ("finance_account", "reported_balance", 4),
                ("finance_accountbalance", "balance", 4),
                ("finance_exchangerate", "rate", 10),
                ("finance_transaction", "amount", 4),
            ]
        ),
    ]
