from finance.models.counts import TransactionCount
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
