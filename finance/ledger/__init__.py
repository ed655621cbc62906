"""The ledger's only way in: every write of transaction rows, from the API, the admin, an
import, a provider sync or a trade, goes through a `ledger_batch()`, whose close derives the
balances, transfer pairs, row counters and search entries in the same database transaction.

Nothing outside this package writes `Transaction` rows or runs that derivation
(tests/finance/test_ledger_seam.py holds that)."""

from finance.ledger.after import PairsLater, merge_account_dates
from finance.ledger.balances import account_balance_series, trade_model
from finance.ledger.batch import LedgerBatch, Was, ledger_batch
from finance.ledger.check import ledger_check
from finance.ledger.db.fastinsert import StreamedInsert, fast_insert
from finance.ledger.db.row_counts import TransactionRows, row_counts_tidy
from finance.ledger.db.search_sqlite import MATCH_SQL as SQLITE_MATCH_SQL
from finance.ledger.db.search_sqlite import phrase as sqlite_phrase
from finance.ledger.db.search_sqlite import search_index_refresh
from finance.ledger.pairs import MAX_DAYS_APART, legs_lock, outflow_kind, unpaired
from finance.ledger.rows import ROW_FIELDS
from finance.ledger.snapshots import snapshot_hashes_record
from finance.ledger.valuation import latest_prices, position_value

__all__ = [
    "MAX_DAYS_APART",
    "ROW_FIELDS",
    "SQLITE_MATCH_SQL",
    "LedgerBatch",
    "PairsLater",
    "StreamedInsert",
    "TransactionRows",
    "Was",
    "account_balance_series",
    "fast_insert",
    "latest_prices",
    "ledger_batch",
    "ledger_check",
    "legs_lock",
    "merge_account_dates",
    "outflow_kind",
    "position_value",
    "row_counts_tidy",
    "search_index_refresh",
    "snapshot_hashes_record",
    "sqlite_phrase",
    "trade_model",
    "unpaired",
]
