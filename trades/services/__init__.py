"""Trade, security and holding writes. The provider sync calls holdings_replace_from_provider."""

from trades.services.changes import trade_delete, trade_update
from trades.services.holdings import (
    holdings_recompute_from_trades,
    holdings_replace_from_provider,
)
from trades.services.trades import Entry, trade_create

__all__ = [
    "Entry",
    "holdings_recompute_from_trades",
    "holdings_replace_from_provider",
    "trade_create",
    "trade_delete",
    "trade_update",
]
