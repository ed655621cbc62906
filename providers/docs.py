"""What the API's clients read about provider connections, provider accounts and syncs:
notes added to the generated descriptions (finance/api/resource_docs.py), the other
operations' descriptions and the create's examples (decisions.md, Provider connections)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample

CONNECTION_NOTES = {
    "list": "Bank-data connections (Lunch Flow, SimpleFIN) with their provider accounts. "
    "Credentials are never answered.",
    "create": "Connects a provider: `provider` `lunchflow` with its `api_key`, or `simplefin` "
    "with a SimpleFIN Bridge `setup_token`. The credential is checked with the provider (its "
    "accounts are discovered) before anything is stored, and stored encrypted; one that cannot "
    "be used is a 422 saying why. The answer lists the provider accounts found: link them "
    "with `PATCH /provider_accounts/{id}`.\n\n"
    "With `connection_id` (a connection of the same provider, for instance one whose status is "
    "`requires_update`), the new credential replaces the old one in place, every account link "
    "kept, and the answer is 200.",
    "destroy": "The connection's provider accounts and syncs go; the ledger accounts and their "
    "transactions stay.",
}

CONNECTION_EXAMPLES = [
    OpenApiExample(
        "Lunch Flow",
        summary="Lunch Flow",
        value={"provider": "lunchflow", "api_key": "<your Lunch Flow API key>"},
        request_only=True,
    ),
    OpenApiExample(
        "SimpleFIN",
        summary="SimpleFIN",
        value={"provider": "simplefin", "setup_token": "<the setup token from SimpleFIN Bridge>"},
        request_only=True,
    ),
]

CONNECTION_ACCOUNTS = (
    "The accounts the provider reported for this connection, by name, each with the ledger "
    "account it syncs into (`account_id`; null until linked or created by the first sync) or "
    "`skipped`. Paginated with `page` and `per_page`; the body holds `accounts` and "
    "`pagination`."
)

CONNECTION_SYNC = (
    "Queues a sync of the connection's accounts and answers 202 with it. While a sync of the "
    "connection is pending or running, answers 202 with that one instead. Follow it with "
    "`GET /syncs/{id}`."
)

ACCOUNT_SYNC = (
    "Queues a sync of the provider account linked to this ledger account and answers 202 with "
    "it (or with the connection's sync already pending or running). An account that is not "
    "linked to a provider account is a 422."
)

RECONNECT = (
    "Replaces the connection's credential in place (a new Lunch Flow `api_key` or SimpleFIN "
    "`setup_token`), keeping every account link; the status goes back to `good`. The new "
    "credential is checked first: one that cannot be used is a 422 and leaves the connection "
    "as it was."
)

PROVIDER_ACCOUNT_UPDATE = (
    "Links the provider account to a ledger account of the household (`account_id`; null: a "
    "new ledger account at the next sync) or leaves it out of syncs (`skipped`). A ledger "
    "account can be linked to one provider account only (422)."
)

SYNCS = (
    "Syncs of the household's connections with their window, status, error and counts "
    "(`stats`); filter by `connection_id` and `status`."
)
