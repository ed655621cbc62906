"""SimpleFIN over HTTP: claim a setup token, read `/info` and `/accounts`, through the one
provider seam (providers.http): retries, backoff, Retry-After, statuses, request counting, the
daily budget and outbound address safety live there, not here.

Credentials never travel in a URL we log or raise: the access URL is split into a bare URL and
an `Authorization: Basic` header. Both the claim URL and the access URL come from the user, so
every request is `public_only`. Network errors (refused, reset, timeout, DNS) on reads are
retried `retries` times with exponential backoff and jitter; the claim is sent once and never
again, whatever happens (its URL works once)."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from providers.http import ProviderHttp, ProviderNetworkError, response_json
from providers.simplefin.credentials import (
    AccessUrl,
    InvalidSetupToken,
    bare_url,
    decode_setup_token,
)
from providers.simplefin.parsing import (
    CustomCurrency,
    SimplefinAccountSet,
    _Unreadable,
    parse_account_set,
    sanitize_message,
)
from providers.simplefin.windows import epoch_seconds
from providers.types import ProviderError

logger = logging.getLogger(__name__)

LABEL = "SimpleFIN"
DEFAULT_RETRIES = 3
USER_AGENT = "personal-finance/1 (SimpleFIN client)"

MSG_TOKEN_USED = (
    "This SimpleFIN setup token was already used, has expired or may be compromised "
    "(SimpleFIN answered 403 to the claim). If you did not claim it yourself, disable it in "
    "SimpleFIN Bridge; then create a new setup token and try again."
)
MSG_TOKEN_NOT_FOUND = (
    "SimpleFIN does not know this setup token (the claim URL answered 404). Create a new setup "
    "token and try again."
)
MSG_CLAIM_LOST = (
    "Could not claim this SimpleFIN setup token: {reason}. A setup token works once, so the "
    "claim was not sent again; if it reached SimpleFIN the token is now used. Create a new "
    "setup token and try again."
)
MSG_CLAIM_FAILED = (
    "SimpleFIN answered the claim with HTTP {status}. A setup token works once, so the claim "
    "was not sent again; create a new setup token and try again."
)
MSG_ACCESS_REVOKED = (
    "SimpleFIN refused this connection's access (403): it was revoked or has expired. Create a "
    "new setup token in SimpleFIN Bridge and reconnect this connection with it."
)
MSG_PAYMENT_REQUIRED = (
    "SimpleFIN says payment is required (402): renew the SimpleFIN Bridge subscription, then "
    "sync again."
)
MSG_UNREADABLE = "SimpleFIN sent a response that could not be read."
ACCESS_MESSAGES = {401: MSG_ACCESS_REVOKED, 403: MSG_ACCESS_REVOKED, 402: MSG_PAYMENT_REQUIRED}


def _claim_host(claim_url: str) -> str:
    """The claim URL's scheme and host only: its path is the one-time secret."""
    parts = urlsplit(claim_url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/<claim>"


def claim_setup_token(token: str, *, http: ProviderHttp | None = None) -> str:
    """Exchange a setup token for its access URL: one POST with an empty body, sent once.

    Raises InvalidSetupToken for a malformed, unknown, used, expired or compromised token,
    ProviderError when the claim failed in any other way (never retried). The claim is not
    counted in a request budget (that is per access URL, which has none yet). The access URL
    returned holds the credentials: the caller encrypts it before storing it."""
    claim_url = decode_setup_token(token)
    http = http or ProviderHttp(label=LABEL)
    try:
        response = http.request(
            "POST",
            claim_url,
            data=b"",
            headers={"User-Agent": USER_AGENT},
            passthrough=range(300, 600),
            send_once=True,
            public_only=True,
            counted=False,
            what="claiming the setup token",
            shown_url=_claim_host(claim_url),
        )
    except ProviderNetworkError as exc:
        raise ProviderError(MSG_CLAIM_LOST.format(reason=exc.reason), permanent=True) from None
    if response.status_code == 403:
        raise InvalidSetupToken(MSG_TOKEN_USED)
    if response.status_code == 404:
        raise InvalidSetupToken(MSG_TOKEN_NOT_FOUND)
    if response.status_code != 200:
        raise ProviderError(MSG_CLAIM_FAILED.format(status=response.status_code), permanent=True)
    access_url = response.text.strip()
    AccessUrl.parse(access_url)  # raises when it is not an access URL with credentials
    logger.info("SimpleFIN setup token claimed at %s", _claim_host(claim_url))
    return access_url


class SimplefinClient:
    """Reads one access URL through `http` (whose `requests_made` counts every attempt)."""

    def __init__(
        self,
        access_url: str,
        *,
        http: ProviderHttp | None = None,
        include_pending: bool | None = None,
        retries: int | None = None,
        backoff_base: float | None = None,
    ) -> None:
        self._access = AccessUrl.parse(access_url)
        self.http = http or ProviderHttp(label=LABEL)
        self.include_pending = (
            settings.SIMPLEFIN_INCLUDE_PENDING if include_pending is None else include_pending
        )
        self.retries = DEFAULT_RETRIES if retries is None else retries
        self.backoff_base = (
            settings.SIMPLEFIN_RETRY_BASE_DELAY if backoff_base is None else backoff_base
        )
        self._currencies: dict[str, CustomCurrency | None] = {}

    def __repr__(self) -> str:
        return f"SimplefinClient({self._access.base_url!r})"

    @property
    def requests_made(self) -> int:
        return self.http.requests_made

    @property
    def base_url(self) -> str:
        return self._access.base_url

    def _get(self, url: str, what: str, **kwargs: Any):
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        return self.http.request(
            "GET",
            url,
            headers={**headers, **kwargs.pop("headers", {})},
            network_retries=self.retries,
            backoff_base=self.backoff_base,
            public_only=True,
            what=what,
            **kwargs,
        )

    def _get_json(self, path: str, params: list[tuple[str, str]] | None, what: str) -> Any:
        response = self._get(
            f"{self._access.base_url}/{path}",
            what,
            params=params,
            headers={"Authorization": self._access.authorization},
            messages=ACCESS_MESSAGES,
        )
        try:
            return response_json(response)
        except ValueError:
            raise ProviderError(MSG_UNREADABLE) from None

    def info(self) -> list[str]:
        """The protocol versions the server speaks (`GET /info`)."""
        payload = self._get_json("info", None, "reading server information")
        versions = payload.get("versions") if isinstance(payload, dict) else None
        if not isinstance(versions, list):
            raise ProviderError(MSG_UNREADABLE)
        return [str(v) for v in versions]

    def accounts(
        self,
        *,
        start: dt.datetime | None = None,
        end: dt.datetime | None = None,
        account_ids: Iterable[str] = (),
        balances_only: bool = False,
        version: int | None = None,
    ) -> SimplefinAccountSet:
        """`GET /accounts` for transactions in [start, end) as a typed account set."""
        params: list[tuple[str, str]] = []
        if start is not None:
            params.append(("start-date", str(epoch_seconds(start))))
        if end is not None:
            params.append(("end-date", str(epoch_seconds(end))))
        if self.include_pending:
            params.append(("pending", "1"))  # never pending=0: some servers test presence
        params.extend(("account", str(a)) for a in account_ids)
        if balances_only:
            params.append(("balances-only", "1"))
        if version is not None:
            params.append(("version", str(version)))
        payload = self._get_json("accounts", params, "reading accounts")
        try:
            return parse_account_set(
                payload,
                resolve_currency=self._custom_currency,
                secrets=self._access.secrets(),
            )
        except _Unreadable:
            raise ProviderError(MSG_UNREADABLE)

    def _custom_currency(self, url: str) -> CustomCurrency | None:
        """`{name, abbr}` of a custom currency URL; None when it cannot be read (cached)."""
        if url not in self._currencies:
            self._currencies[url] = None
            try:
                response = self._get(url, "reading a currency", passthrough=range(300, 600))
                data = response_json(response) if response.status_code == 200 else {}
                if isinstance(data, dict) and (data.get("abbr") or data.get("name")):
                    self._currencies[url] = CustomCurrency(
                        url=bare_url(url),
                        name=sanitize_message(data.get("name") or data.get("abbr")),
                        abbr=sanitize_message(data.get("abbr") or data.get("name")),
                    )
            except (ProviderError, ValueError):
                logger.warning("SimpleFIN custom currency %s could not be read", bare_url(url))
        return self._currencies[url]


__all__ = [
    "InvalidSetupToken",
    "SimplefinClient",
    "claim_setup_token",
    "decode_setup_token",
]
