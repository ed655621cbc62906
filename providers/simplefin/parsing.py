"""SimpleFIN account sets (protocol "Account Set", versions 1 and 2) as typed values.

Rules: accounts are keyed by their `id` (never their name); amounts are exact Decimals;
transaction amounts are positive for deposits upstream and are NEGATED into the ledger sign
(positive = money out); `posted == 0` or `pending: true` marks a pending row; `errors` and
`errlist` become sanitised user messages and never fail the accounts that did come back. An
account whose numbers cannot be read is left out with a message, never stored as zero."""

from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from finance.currencies import is_currency
from providers.simplefin.credentials import redact
from providers.types import UpstreamAccount, UpstreamBalance, UpstreamHolding, UpstreamTransaction

CUSTOM_CURRENCY_CODE = "XXX"  # ISO 4217 "no currency": points, miles, custom units
MAX_MESSAGE_LENGTH = 300

_TAGS = re.compile(r"<[^>]*>")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class CustomCurrency:
    url: str
    name: str
    abbr: str


@dataclass
class SimplefinAccount:
    account: UpstreamAccount
    balance: UpstreamBalance
    transactions: list[UpstreamTransaction] = field(default_factory=list)
    holdings: list[UpstreamHolding] = field(default_factory=list)
    custom_currency: CustomCurrency | None = None
    holdings_present: bool = False  # the server sent a `holdings` array (not in the protocol)


@dataclass
class SimplefinAccountSet:
    accounts: list[SimplefinAccount]
    errors: list[str]  # sanitised, displayable, deduplicated

    def by_id(self) -> dict[str, SimplefinAccount]:
        return {a.account.upstream_id: a for a in self.accounts}


class _Unreadable(ValueError):
    pass


def sanitize_message(text: Any, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """An upstream string made safe to show: no markup, no control characters, no
    credentials, one line, bounded length."""
    out = html.unescape(_TAGS.sub(" ", str(text)))
    out = _SPACES.sub(" ", _CONTROL.sub(" ", out)).strip()
    out = redact(out, secrets)
    if len(out) > MAX_MESSAGE_LENGTH:
        out = out[: MAX_MESSAGE_LENGTH - 1].rstrip() + "…"
    return out


def _decimal(value: Any, what: str) -> Decimal:
    if isinstance(value, bool) or value is None:
        raise _Unreadable(what)
    try:
        result = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        raise _Unreadable(what)
    if not result.is_finite():
        raise _Unreadable(what)
    return result


def _optional_decimal(value: Any, what: str) -> Decimal | None:
    if value is None or value == "":
        return None
    return _decimal(value, what)


def _epoch(value: Any) -> int | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        return int(Decimal(str(value)))
    except (InvalidOperation, ValueError):
        return None


def epoch_to_datetime(value: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(value, tz=dt.UTC)


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def parse_errors(payload: dict[str, Any], secrets: list[str] | tuple[str, ...] = ()) -> list[str]:
    """`errors` (v1) and `errlist` (v2) as sanitised, deduplicated messages."""
    messages: list[str] = []
    connections = {
        str(c.get("conn_id")): _text(c.get("name"))
        for c in payload.get("connections") or []
        if isinstance(c, dict)
    }
    for item in payload.get("errors") or []:
        messages.append(sanitize_message(item, secrets))
    for item in payload.get("errlist") or []:
        if not isinstance(item, dict):
            messages.append(sanitize_message(item, secrets))
            continue
        msg = sanitize_message(item.get("msg") or item.get("code") or "Unknown error", secrets)
        where = connections.get(str(item.get("conn_id"))) if item.get("conn_id") else ""
        if where:
            msg = f"{sanitize_message(where, secrets)}: {msg}"
        messages.append(msg)
    return list(dict.fromkeys(m for m in messages if m))


def _institution(raw: dict[str, Any], connections: dict[str, str]) -> str:
    org = raw.get("org") if isinstance(raw.get("org"), dict) else {}
    name = _text(org.get("name")) or _text(org.get("domain"))
    if not name and raw.get("conn_id") is not None:
        name = connections.get(str(raw.get("conn_id")), "")
    return name


def _transaction(raw: dict[str, Any], currency: str, fallback: dt.date) -> UpstreamTransaction:
    upstream_amount = _decimal(raw.get("amount"), "amount")
    posted = _epoch(raw.get("posted")) or 0
    transacted = _epoch(raw.get("transacted_at"))
    pending = bool(raw.get("pending")) or posted == 0
    if posted:
        date = epoch_to_datetime(posted).date()
    elif transacted:
        date = epoch_to_datetime(transacted).date()
    else:
        date = fallback
    description = _text(raw.get("description"))
    payee = _text(raw.get("payee")) or None
    memo = _text(raw.get("memo")) or None
    upstream_id = _text(raw.get("id")) or None
    return UpstreamTransaction(
        upstream_id=upstream_id,
        date=date,
        amount=Decimal(0) - upstream_amount,  # deposit (+) upstream = money in (-) in the ledger
        currency=currency,
        name=description or payee or memo or "(no description)",
        merchant_name=payee,
        notes=memo,
        pending=pending,
        raw=raw,
    )


def _holding(raw: dict[str, Any], currency: str) -> UpstreamHolding:
    quantity = _decimal(raw.get("shares", raw.get("quantity")), "holding shares")
    value = _optional_decimal(raw.get("market_value", raw.get("value")), "holding value")
    price = _optional_decimal(raw.get("price"), "holding price")
    if price is None and value is not None and quantity:
        price = value / quantity
    symbol = _text(raw.get("symbol") or raw.get("ticker")) or None
    return UpstreamHolding(
        ticker=symbol,
        name=_text(raw.get("description") or raw.get("name")) or symbol or "(unnamed holding)",
        quantity=quantity,
        price=price,
        value=value,
        cost_basis=_optional_decimal(raw.get("cost_basis"), "holding cost basis"),
        currency=_holding_currency(raw.get("currency"), currency),
        raw=raw,
    )


def _holding_currency(value: Any, fallback: str) -> str:
    code = _text(value).upper()
    return code if is_currency(code) else fallback


def parse_account_set(
    payload: Any,
    *,
    resolve_currency: Callable[[str], CustomCurrency | None] | None = None,
    secrets: list[str] | tuple[str, ...] = (),
    today: dt.date | None = None,
) -> SimplefinAccountSet:
    """Typed accounts from an account set. `resolve_currency(url)` fetches a custom currency."""
    if not isinstance(payload, dict):
        raise _Unreadable("account set")
    errors = parse_errors(payload, secrets)
    connections = {
        str(c.get("conn_id")): _text(c.get("name"))
        for c in payload.get("connections") or []
        if isinstance(c, dict)
    }
    today = today or dt.datetime.now(dt.UTC).date()
    accounts: list[SimplefinAccount] = []
    seen: dict[str, str] = {}  # upstream id -> its institution key
    for raw in payload.get("accounts") or []:
        if not isinstance(raw, dict) or not _text(raw.get("id")):
            errors.append("SimpleFIN sent an account without an id; it was skipped.")
            continue
        upstream_id = _text(raw["id"])
        institution = _institution_key(raw)
        label = sanitize_message(raw.get("name") or upstream_id, secrets)
        if upstream_id in seen and seen[upstream_id] != institution:
            # ids are unique within an institution only: qualify the second one
            upstream_id = f"{institution}:{upstream_id}"
        if upstream_id in seen:
            errors.append(f"SimpleFIN sent account {label} twice; the first copy was used.")
            continue
        try:
            accounts.append(_account(raw, upstream_id, connections, resolve_currency, today))
            seen[upstream_id] = institution
        except _Unreadable as exc:
            errors.append(
                f"Account {label}: SimpleFIN sent an unreadable {exc}; "
                "the account was not updated this time."
            )
    return SimplefinAccountSet(accounts, list(dict.fromkeys(errors)))


def _institution_key(raw: dict[str, Any]) -> str:
    org = raw.get("org") if isinstance(raw.get("org"), dict) else {}
    for value in (org.get("id"), org.get("domain"), org.get("sfin-url"), raw.get("conn_id")):
        if _text(value):
            return _text(value)
    return ""


def _account(
    raw: dict[str, Any],
    upstream_id: str,
    connections: dict[str, str],
    resolve_currency: Callable[[str], CustomCurrency | None] | None,
    today: dt.date,
) -> SimplefinAccount:
    currency_field = _text(raw.get("currency"))
    custom: CustomCurrency | None = None
    if currency_field.lower().startswith(("http://", "https://")):
        custom = resolve_currency(currency_field) if resolve_currency else None
        abbr = (custom.abbr if custom else "").upper()
        currency = abbr if is_currency(abbr) else CUSTOM_CURRENCY_CODE
    else:
        currency = currency_field.upper() or "USD"
        if not is_currency(currency):
            raise _Unreadable(f"currency ({sanitize_message(currency_field)})")
    balance_date = _epoch(raw.get("balance-date"))
    balance = UpstreamBalance(
        amount=_decimal(raw.get("balance"), "balance"),
        currency=currency,
        as_of=epoch_to_datetime(balance_date) if balance_date else None,
        available=_optional_decimal(raw.get("available-balance"), "available balance"),
    )
    account_raw = {k: v for k, v in raw.items() if k not in ("transactions", "holdings")}
    if custom:
        account_raw["custom_currency"] = {
            "url": custom.url,
            "name": custom.name,
            "abbr": custom.abbr,
        }
    account = UpstreamAccount(
        upstream_id=upstream_id,
        name=_text(raw.get("name")) or _text(raw["id"]),
        currency=currency,
        account_type=None,
        institution_name=_institution(raw, connections),
        raw=account_raw,
    )
    transactions = [
        _transaction(t, currency, today)
        for t in raw.get("transactions") or []
        if isinstance(t, dict)
    ]
    holdings = [_holding(h, currency) for h in raw.get("holdings") or [] if isinstance(h, dict)]
    present = isinstance(raw.get("holdings"), list)
    return SimplefinAccount(account, balance, transactions, holdings, custom, present)
