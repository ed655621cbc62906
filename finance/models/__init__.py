from finance.models.counts import TransactionCount
from finance.models.fx import ExchangeRate
from finance.models.household import ApiKey, Family, User
from finance.models.ledger import (
    Account,
    AccountBalance,
    Category,
    Merchant,
    RejectedTransfer,
    Tag,
    Transaction,
    TransactionTag,
    Transfer,
)

__all__ = [
    "Account",
    "AccountBalance",
    "ApiKey",
    "Category",
    "ExchangeRate",
    "Family",
    "Merchant",
    "RejectedTransfer",
    "Tag",
    "Transaction",
    "TransactionCount",
    "TransactionTag",
    "Transfer",
    "User",
]
