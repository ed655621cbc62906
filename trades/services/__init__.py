"""Trade, security and holding writes. The provider sync calls holdings_replace_from_provider,
then provider_prices_record with the prices it returns."""

from trades.services.changes import trade_delete, trade_update
from trades.services.holdings import (
    holdings_recompute_from_trades,
    holdings_replace_from_provider,
)
from trades.services.prices import provider_prices_record
from trades.services.trades import Entry, trade_create

__all__ = [
    "Entry",
    "holdings_recompute_from_trades",
    "holdings_replace_from_provider",
    "provider_prices_record",
    "trade_create",
    "trade_delete",
    "trade_update",
]
