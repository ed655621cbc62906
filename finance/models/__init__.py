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
from finance.models.rules import Rule, RuleRun

__all__ = [
    "Account",
    "AccountBalance",
    "ApiKey",
    "Category",
    "ExchangeRate",
    "Family",
    "Merchant",
    "RejectedTransfer",
    "Rule",
    "RuleRun",
    "Tag",
    "Transaction",
    "TransactionCount",
    "TransactionTag",
    "Transfer",
    "User",
]
