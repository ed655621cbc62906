"""What every provider client returns: typed values with Decimal amounts and ISO currencies,
never raw JSON. The sync engine turns these into ledger writes.

Amounts of UpstreamTransaction are already in the LEDGER sign of decisions.md:
positive = money leaving the account, negative = money entering. Each client converts
its provider's convention (Lunch Flow: negative = money out; SimpleFIN: positive = deposit)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypedDict


class CredentialFields(TypedDict, total=False):
    """What a household sends to connect a provider: Lunch Flow's API key or a SimpleFIN
    setup token. The adapter checks the one its provider needs (a 422 naming it)."""

    api_key: str
    setup_token: str


@dataclass(frozen=True)
class UpstreamAccount:
    upstream_id: str
    name: str
    currency: str
    account_type: str | None = None  # a ledger account type when known, else None
    institution_name: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class UpstreamBalance:
    amount: Decimal
    currency: str
    as_of: dt.datetime | None = None
    available: Decimal | None = None


@dataclass(frozen=True)
class UpstreamTransaction:
    upstream_id: str | None  # None when the provider sent a blank id
    date: dt.date
    amount: Decimal  # ledger sign: positive = money out
    currency: str
    name: str
    merchant_name: str | None = None
    notes: str | None = None
    pending: bool = False
    raw: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class UpstreamHolding:
    ticker: str | None
    name: str
    quantity: Decimal
    price: Decimal | None
    value: Decimal | None
    cost_basis: Decimal | None
    currency: str
    raw: dict[str, Any] = field(default_factory=dict, compare=False)


class ProviderError(Exception):
    """A failure talking to a provider, in words a user understands.

    `permanent`: retrying will not help (bad credential, payment required).
    `requires_update`: the household must give a new credential (401/403).
    `retry_after`: seconds the provider asked us to wait (429)."""

    def __init__(
        self,
        user_message: str,
        *,
        permanent: bool = False,
        requires_update: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.permanent = permanent or requires_update
        self.requires_update = requires_update
        self.retry_after = retry_after


class HoldingsNotSupported(ProviderError):
    """The provider says this account offers no holdings; it is not asked again."""

    def __init__(self, message: str = "Holdings are not supported for this account.") -> None:
        super().__init__(message, permanent=True)
