"""The tag links get the transaction's date and household, kept by triggers, and the index the
`tag_ids[]` list reads (finance/tag_dates.py). The table Django made for `Transaction.tags`
becomes the explicit `TransactionTag` model without touching its rows."""

import django.db.models.deletion
from django.db import migrations, models


def forwards(apps, schema_editor):
    from finance.ledger.db.tag_dates import tag_dates_ensure

    tag_dates_ensure(using=schema_editor.connection.alias)


def backwards(apps, schema_editor):
    from finance.ledger.db.tag_dates import tag_dates_drop

    tag_dates_drop(using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [("finance", "0004_transaction_search_sqlite")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="TransactionTag",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "transaction",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="tag_links",
                                to="finance.transaction",
                            ),
                        ),
                        (
                            "tag",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, to="finance.tag"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "finance_transaction_tags",
                        "unique_together": {("transaction", "tag")},
                    },
                ),
                migrations.AlterField(
                    model_name="transaction",
                    name="tags",
                    field=models.ManyToManyField(
                        blank=True,
                        related_name="transactions",
                        through="finance.TransactionTag",
                        to="finance.tag",
                    ),
                ),
            ],
            database_operations=[],
        ),
        # The new index starts with the tag: the tag's own index is a copy of its first column.
        migrations.AlterField(
            model_name="transactiontag",
            name="tag",
            field=models.ForeignKey(
                db_index=False, on_delete=django.db.models.deletion.CASCADE, to="finance.tag"
            ),
        ),
        migrations.AddField(
            model_name="transactiontag",
            name="date",
            field=models.DateField(editable=False, null=True),
        ),
        migrations.AddField(
            model_name="transactiontag",
            name="family",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="finance.family",
            ),
        ),
        migrations.RunPython(forwards, backwards),
        migrations.AddIndex(
            model_name="transactiontag",
            index=models.Index(
                fields=["tag", "family", "-date", "-transaction"], name="txn_tag_family_date"
            ),
        ),
    ]
