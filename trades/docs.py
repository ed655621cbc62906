"""What the API's clients read about trades: notes added to the generated descriptions
(finance/api/resource_docs.py) and the create's examples (docs/decisions.md, Trades)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample

ACCOUNT = "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d"
CHECKING = "3f2c1b0e-8d4a-4c6e-9b1a-2e5d7f9a1c3b"

TRADE_NOTES = {
    "list": "Trades of the household's investment and crypto accounts; filter by "
    "`account_id`, `security_id`, `start_date` and `end_date` (inclusive). Deposits and "
    "withdrawals recorded here are transactions, listed under `/transactions`.",
    "create": "The kind comes from `type` (`buy`, `sell`, `dividend`, `interest`, `deposit`, "
    "`withdrawal`), else from `investment_activity_label`, else from the sign of `qty`.\n\n"
    "- A buy or sell needs `qty` and `price` (greater than zero) and a security: "
    "`security_id`, a `ticker` (`VTI`, or `VTI|ARCX` with an exchange code: shared reference "
    "data) or a `manual_ticker` (private to the household). `amount` may give the cash "
    "including fees; else it is `qty` x `price`.\n"
    "- A dividend or interest needs `amount`; the security is optional.\n"
    "- A deposit or withdrawal records a transaction, not a trade (`entryable_type` is then "
    "`Transaction`); with `transfer_account_id` (another account of the household in the same "
    "currency) it is a confirmed transfer from or to that account.\n\n"
    "The account must be an investment or crypto account; `currency` defaults to the "
    "account's. Every problem is reported at once (422) and nothing is written.",
    "partial_update": "A new `qty` or `price` recomputes the amount and the name, keeping the "
    "fee the amount held. Changing the label between `Buy` and `Sell` flips the direction; "
    "turning a buy or sell into another kind is a 422.",
    "destroy": "The account's holdings and balances follow.",
}

TRADE_EXAMPLES = [
    OpenApiExample(
        "A buy by ticker",
        summary="A buy by ticker",
        value={
            "trade": {
                "account_id": ACCOUNT,
                "date": "2024-05-01",
                "type": "buy",
                "ticker": "VTI",
                "qty": "10",
                "price": "250.00",
                "currency": "USD",
            }
        },
        request_only=True,
    ),
    OpenApiExample(
        "A deposit from a checking account",
        summary="A deposit from a checking account",
        value={
            "trade": {
                "account_id": ACCOUNT,
                "date": "2024-05-01",
                "type": "deposit",
                "amount": "1000.00",
                "transfer_account_id": CHECKING,
            }
        },
        request_only=True,
    ),
]
