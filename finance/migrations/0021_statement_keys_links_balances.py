"""PostgreSQL: a tag link's keys (its transaction, its tag) and a balance row's account are
checked once per statement, as the ledger's own keys are since 0020 (core/statement_keys.py;
docs/decisions.md, "Foreign keys checked once per statement"): an import's or a sync's links
and the balance series a batch writes are written in bulk too."""

from django.db import migrations

from core.statement_keys import StatementKey, statement_keys_operation

KEYS = (
    StatementKey(
        "txn_tag_transaction_fk", "finance_transaction_tags", ("transaction_id",),
        "finance_transaction",
    ),
    StatementKey("txn_tag_tag_fk", "finance_transaction_tags", ("tag_id",), "finance_tag"),
    StatementKey(
        "balance_account_fk", "finance_accountbalance", ("account_id",), "finance_account"
    ),
)  # fmt: skip



class Migration(migrations.Migration):
    dependencies = [("finance", "0020_statement_keys")]

    operations = [statement_keys_operation(KEYS)]
