"""What the API's clients read about the transaction operations: notes added to the generated
descriptions (finance/api/resource_docs.py), the bulk create's description and the examples."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample

ACCOUNT = "3f2c1b0e-8d4a-4c6e-9b1a-2e5d7f9a1c3b"
CATEGORY = "9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
TAG = "4d3c2b1a-0f9e-4d8c-b7a6-5f4e3d2c1b0a"

CREATED = {
    "id": "c0ffee00-1234-4abc-8def-0123456789ab",
    "date": "2024-05-01",
    "amount": "42.50",
    "amount_cents": 4250,
    "signed_amount_cents": -4250,
    "currency": "EUR",
    "name": "Groceries",
    "notes": None,
    "external_id": "bank-0042",
    "source": "my-bank-script",
    "classification": "expense",
    "kind": "standard",
    "pending": False,
    "excluded": False,
    "account": {
        "id": ACCOUNT,
        "name": "Everyday checking",
        "account_type": "depository",
        "status": "active",
    },
    "category": None,
    "merchant": None,
    "tags": [],
    "transfer": None,
    "created_at": "2024-05-01T09:30:00.000000Z",
    "updated_at": "2024-05-01T09:30:00.000000Z",
}

NOTES = {
    "list": "The filters combine: `account_id` or "
    "`account_ids[]` (several ids as `account_ids[]=a&account_ids[]=b`, `account_ids=a,b` or "
    "repeated `account_ids=`), `category_id`, `merchant_id`, `tag_ids[]` (any of the tags), "
    "`start_date` and `end_date` (inclusive), `min_amount` and `max_amount` (in the ledger "
    "sign: positive is money leaving the account), `type` (`income` or `expense`), `pending`, "
    "and `search` (in the name, the notes and the merchant's name).",
    "create": "Amounts are in the ledger sign: positive is money leaving the account (an "
    "expense), negative is money entering it (income). Or send `nature` (`income` or `inflow`, "
    "`expense` or `outflow`) and the amount is stored with that sign whatever its own. `name` "
    "(or `description`) is required; `currency` defaults to the household's currency; at "
    "most 4 decimal places.\n\n"
    "The create is idempotent with `external_id`: a transaction already stored for the same "
    "account, `source` (`api` by default) and `external_id` is answered with 200 and left as "
    "it is; a new one with 201.",
    "partial_update": "`tag_ids` replaces the transaction's tags. Changing `external_id` to "
    "one another transaction of the account already has is a 422.",
    "destroy": "Deleting a leg of a transfer deletes the transfer; the other leg stays.",
}

CREATE_EXAMPLES = [
    OpenApiExample(
        "An expense",
        summary="An expense",
        value={
            "transaction": {
                "account_id": ACCOUNT,
                "date": "2024-05-01",
                "amount": "42.50",
                "nature": "expense",
                "name": "Groceries",
                "category_id": CATEGORY,
                "tag_ids": [TAG],
                "notes": "Weekly shop",
                "external_id": "bank-2024-05-01-0042",
                "source": "my-bank-script",
            }
        },
        request_only=True,
    ),
    OpenApiExample(
        "Income, signed",
        summary="Income, signed",
        value={
            "transaction": {
                "account_id": ACCOUNT,
                "date": "2024-05-31",
                "amount": "-2500.00",
                "name": "Salary",
            }
        },
        request_only=True,
    ),
]

BULK = (
    "Create up to 1,000 transactions in one request, each under the rules of the single "
    "create. Answers 200 with one result per item, in the order sent: status 201 (created), "
    "200 (already stored: the same account, source and external_id, stored before or earlier "
    "in this request) or 422 with that item's `errors`; `summary` counts them. An item that "
    "fails does not stop the others. A missing, empty or oversized `transactions` list is a "
    "422 for the whole request."
)

BULK_EXAMPLES = [
    OpenApiExample(
        "Two transactions",
        summary="Two transactions",
        value={
            "transactions": [
                {
                    "account_id": ACCOUNT,
                    "date": "2024-05-01",
                    "amount": "42.50",
                    "name": "Groceries",
                    "external_id": "bank-0042",
                    "source": "my-bank-script",
                },
                {
                    "account_id": ACCOUNT,
                    "date": "2024-05-02",
                    "amount": "-1200",
                    "name": "Refund",
                    "external_id": "bank-0043",
                    "source": "my-bank-script",
                },
            ]
        },
        request_only=True,
    ),
    OpenApiExample(
        "One created, one refused",
        summary="One created, one refused",
        value={
            "results": [
                {"index": 0, "status": 201, "transaction": CREATED, "errors": None},
                {
                    "index": 1,
                    "status": 422,
                    "transaction": None,
                    "errors": ["date: is not a valid calendar date"],
                },
            ],
            "summary": {"created": 1, "existing": 0, "failed": 1},
        },
        response_only=True,
        status_codes=["200"],
    ),
]
