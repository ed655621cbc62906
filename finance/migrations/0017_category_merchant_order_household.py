"""The category and merchant order indexes end with the household: a filtered list's count,
scoped to the household too, then reads the index alone (SQLite read 50,000 table rows of a
1M-row ledger per count of one category; bench/README.md). Plain DROP / CREATE INDEX on both
databases: no table is rebuilt."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("finance", "0016_transaction_account_family_key"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="transaction",
            name="txn_category_order",
        ),
        migrations.RemoveIndex(
            model_name="transaction",
            name="txn_merchant_order",
        ),
        migrations.AddIndex(
            model_name="transaction",
            index=models.Index(
                condition=models.Q(("category__isnull", False)),
                fields=["category", "-date", "-created_at", "-id", "family"],
                name="txn_category_order",
            ),
        ),
        migrations.AddIndex(
            model_name="transaction",
            index=models.Index(
                condition=models.Q(("merchant__isnull", False)),
                fields=["merchant", "-date", "-created_at", "-id", "family"],
                name="txn_merchant_order",
            ),
        ),
    ]
