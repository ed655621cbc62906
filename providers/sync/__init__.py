"""The sync engine: `sync_run` (engine.py) drives an adapter, `transactions_apply` (apply.py)
reconciles one account's upstream rows with the ledger."""
