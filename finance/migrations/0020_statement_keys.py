"""PostgreSQL: a transaction's three foreign keys (account and household, category, merchant)
are checked once per statement instead of once per row (core/statement_keys.py; docs/
decisions.md, "Foreign keys checked once per statement").

Done outside Django's state, as 0016 was: the model keeps its ForeignKeys (the ORM, the admin
and SQLite are unchanged). Installing a key checks nothing already stored: the constraints it
replaces held every stored row."""

from django.db import migrations

from core.statement_keys import StatementKey, statement_keys_operation

KEYS = (
    StatementKey(
        "txn_account_family_fk",
        "finance_transaction",
        ("account_id", "family_id"),
        "finance_account",
        ("id", "family_id"),
    ),
    StatementKey("txn_category_fk", "finance_transaction", ("category_id",), "finance_category"),
    StatementKey("txn_merchant_fk", "finance_transaction", ("merchant_id",), "finance_merchant"),
)



class Migration(migrations.Migration):
    dependencies = [("finance", "0019_transaction_time_ordered_keys")]

    operations = [statement_keys_operation(KEYS)]
