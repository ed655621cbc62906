"""Lunch Flow API client (docs: https://lunchflow.app, shared/spec/providers.md).

Base URL `LUNCHFLOW_BASE_URL`, the key in header `x-api-key`. Amounts come signed with
negative = money out; UpstreamTransaction carries the ledger sign (positive = money out), so
every amount is negated here. Every fetch returns all of its rows or raises ProviderError.

Pagination: a response may hold fewer rows than its `total`. The client follows a next link
(`next`, `nextPage`, `links.next`) or a cursor (`nextCursor`, `cursor`) when the response gives
one; otherwise it splits the date range in two and asks again, down to single days; a single
day still short is asked with `offset`, then with `page`; if neither brings anything new the
fetch fails rather than return a partial list."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urljoin, urlsplit

from django.conf import settings

from providers.http import ProviderHttp
from providers.types import (
    HoldingsNotSupported,
    ProviderError,
    UpstreamAccount,
    UpstreamBalance,
    UpstreamHolding,
    UpstreamTransaction,
)

LABEL = "Lunch Flow"
MAX_PAGES = 1000


def _malformed(what: str) -> ProviderError:
    return ProviderError(f"{LABEL} returned malformed data: {what}.")


def parse_decimal(value: Any, what: str) -> Decimal:
    if isinstance(value, bool) or value is None or value == "":
        raise _malformed(f"{what} is missing or not a number")
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise _malformed(f"{what} is not a number") from None
    if not number.is_finite():
        raise _malformed(f"{what} is not a finite number")
    return number


def parse_date(value: Any, what: str) -> dt.date:
    if not isinstance(value, str) or len(value) < 10:
        raise _malformed(f"{what} is missing or not a date")
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        raise _malformed(f"{what} is not a date") from None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ("" if value is None else str(value))


def _currency(value: Any) -> str:
    text = _text(value).upper()
    return text if len(text) == 3 and text.isalpha() else ""


class LunchFlowClient:
    def __init__(
        self,
        api_key: str,
        *,
        http: ProviderHttp,
        base_url: str | None = None,
        include_pending: bool | None = None,
    ) -> None:
        self._api_key = api_key
        self.http = http
        self.base_url = (base_url or settings.LUNCHFLOW_BASE_URL).rstrip("/")
        self.include_pending = (
            settings.LUNCHFLOW_INCLUDE_PENDING if include_pending is None else include_pending
        )

    def __repr__(self) -> str:
        return f"<LunchFlowClient {self.base_url}>"

    @property
    def _headers(self) -> dict[str, str]:
        return {"x-api-key": self._api_key, "Accept": "application/json"}

    def _get(self, path: str, params: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        return self._get_url(f"{self.base_url}{path}", params, **kwargs)

    def _get_url(self, url: str, params: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        return self.http.get_json(url, params=params, headers=self._headers, **kwargs)

    @staticmethod
    def _object(body: Any, key: str) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _malformed(f"expected a JSON object with {key!r}")
        return body

    # --- accounts ------------------------------------------------------------------------------
    def accounts(self) -> list[UpstreamAccount]:
        body = self._object(self._get("/accounts"), "accounts")
        rows = body.get("accounts")
        if not isinstance(rows, list):
            raise _malformed("'accounts' is not a list")
        accounts = []
        for row in rows:
            if not isinstance(row, dict) or _text(row.get("id")) == "":
                raise _malformed("an account without an id")
            accounts.append(
                UpstreamAccount(
                    upstream_id=_text(row.get("id")),
                    name=_text(row.get("name")) or f"Account {_text(row.get('id'))}",
                    currency=_currency(row.get("currency")),
                    account_type=None,
                    institution_name=_text(row.get("institution_name")),
                    raw=row,
                )
            )
        return accounts

    def balance(self, account_id: str) -> UpstreamBalance:
        body = self._object(self._get(f"/accounts/{account_id}/balance"), "balance")
        balance = body.get("balance")
        if not isinstance(balance, dict):
            raise _malformed("'balance' is missing")
        return UpstreamBalance(
            amount=parse_decimal(balance.get("amount"), "balance amount"),
            currency=_currency(balance.get("currency")),
        )

    # --- transactions --------------------------------------------------------------------------
    def transactions(
        self, account_id: str, start: dt.date, end: dt.date
    ) -> list[UpstreamTransaction]:
        rows = self._range(account_id, start, end)
        return [self._transaction(row) for row in rows]

    def _params(self, start: dt.date, end: dt.date) -> dict[str, str]:
        params = {"from": start.isoformat(), "to": end.isoformat()}
        if self.include_pending:
            params["include_pending"] = "true"
        return params

    def _page(self, account_id: str, params: dict[str, Any], url: str | None = None) -> tuple:
        body = self._object(
            self._get_url(url, None)
            if url
            else self._get(f"/accounts/{account_id}/transactions", params),
            "transactions",
        )
        rows = body.get("transactions")
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise _malformed("'transactions' is not a list of objects")
        total = body.get("total")
        if total is not None and (isinstance(total, bool) or not isinstance(total, int)):
            raise _malformed("'total' is not an integer")
        return body, rows, total

    def _range(self, account_id: str, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
        params = self._params(start, end)
        body, rows, total = self._page(account_id, params)
        if total is None or len(rows) >= total:
            return rows
        next_url = self._next_url(body)
        cursor = self._cursor(body)
        pages = 0
        while (next_url or cursor) and len(rows) < total and pages < MAX_PAGES:
            pages += 1
            if next_url:
                body, more, _ = self._page(account_id, {}, url=next_url)
            else:
                body, more, _ = self._page(account_id, {**params, "cursor": cursor})
            if not more:
                break
            rows += more
            next_url, cursor = self._next_url(body), self._cursor(body)
        if pages:
            return self._complete(rows, total, start, end)
        if start < end:
            middle = start + (end - start) // 2
            rows = self._range(account_id, start, middle) + self._range(
                account_id, middle + dt.timedelta(days=1), end
            )
            return self._complete(rows, total, start, end)
        first = list(rows)
        while len(rows) < total and pages < MAX_PAGES:
            pages += 1
            _, more, _ = self._page(account_id, {**params, "offset": len(rows)})
            if not more or more == first:
                break
            rows += more
        if len(rows) < total:  # offset not understood: try page numbers
            rows, page = list(first), 1
            while len(rows) < total and page < MAX_PAGES:
                page += 1
                _, more, _ = self._page(account_id, {**params, "page": page})
                if not more or more == first:
                    break
                rows += more
        return self._complete(rows, total, start, end)

    @staticmethod
    def _complete(rows: list, total: int, start: dt.date, end: dt.date) -> list:
        if len(rows) < total:
            raise ProviderError(
                f"{LABEL} announced {total} transactions for {start}..{end} but returned only "
                f"{len(rows)}; the sync stopped so that no transaction goes missing."
            )
        return rows

    def _next_url(self, body: dict[str, Any]) -> str | None:
        link = body.get("next") or body.get("nextPage")
        links = body.get("links")
        if not link and isinstance(links, dict):
            link = links.get("next")
        if not isinstance(link, str) or not link:
            return None
        url = urljoin(self.base_url + "/", link)
        if urlsplit(url).netloc != urlsplit(self.base_url).netloc:
            raise ProviderError(f"{LABEL} sent a next-page link to another host; not followed.")
        return url

    @staticmethod
    def _cursor(body: dict[str, Any]) -> str | None:
        cursor = body.get("nextCursor") or body.get("next_cursor") or body.get("cursor")
        return str(cursor) if isinstance(cursor, (str, int)) and cursor != "" else None

    @staticmethod
    def _transaction(row: dict[str, Any]) -> UpstreamTransaction:
        amount = parse_decimal(row.get("amount"), "transaction amount")
        merchant = _text(row.get("merchant")) or None
        description = _text(row.get("description"))
        return UpstreamTransaction(
            upstream_id=_text(row.get("id")) or None,
            date=parse_date(row.get("date"), "transaction date"),
            amount=-amount,  # Lunch Flow: negative = money out; ledger: positive = money out
            currency=_currency(row.get("currency")),
            name=description or merchant or "Transaction",
            merchant_name=merchant,
            pending=row.get("isPending") is True,
            raw=row,
        )

    # --- holdings ------------------------------------------------------------------------------
    def holdings(self, account_id: str) -> list[UpstreamHolding]:
        url = f"{self.base_url}/accounts/{account_id}/holdings"
        response = self.http.request("GET", url, headers=self._headers, passthrough=(501,))
        if response.status_code == 501:
            raise HoldingsNotSupported()
        body = self.http.json_of(response, url)
        if isinstance(body, dict) and (
            body.get("supported") is False
            or "not supported" in _text(body.get("message") or body.get("error")).lower()
        ):
            raise HoldingsNotSupported()
        body = self._object(body, "holdings")
        rows = body.get("holdings")
        if not isinstance(rows, list):
            raise _malformed("'holdings' is not a list")
        fallback = _currency(body.get("currency"))
        holdings = []
        for row in rows:
            if not isinstance(row, dict):
                raise _malformed("a holding is not an object")
            security = row.get("security") if isinstance(row.get("security"), dict) else {}
            optional = {
                key: parse_decimal(row[key], key) if row.get(key) is not None else None
                for key in ("price", "value", "costBasis")
            }
            holdings.append(
                UpstreamHolding(
                    ticker=_text(security.get("tickerSymbol")) or None,
                    name=_text(security.get("name")) or _text(security.get("tickerSymbol")),
                    quantity=parse_decimal(row.get("quantity"), "holding quantity"),
                    price=optional["price"],
                    value=optional["value"],
                    cost_basis=optional["costBasis"],
                    currency=_currency(row.get("currency"))
                    or _currency(security.get("currency"))
                    or fallback,
                    raw=row,
                )
            )
        return holdings
