"""SimpleFIN over HTTP: claim a setup token, read `/info` and `/accounts`.

Credentials never travel in a URL we log or raise: the access URL is split into a bare URL and
an `Authorization: Basic` header. Network errors (refused, reset, timeout, DNS) are retried up
to `retries` times with exponential backoff and jitter; HTTP statuses are never retried here
(403 asks for a new setup token, 402 says payment is required, 429 carries Retry-After)."""

from __future__ import annotations

import datetime as dt
import logging
import random
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

import requests
from django.conf import settings

from providers.simplefin.credentials import (
    AccessUrl,
    InvalidSetupToken,
    bare_url,
    decode_setup_token,
    redact,
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
MSG_TOKEN_LOST_CLAIM = (
    "The connection dropped while claiming this SimpleFIN setup token and a retry was refused "
    "(403): the token may have been used by the lost attempt. Create a new setup token."
)
MSG_ACCESS_REVOKED = (
    "SimpleFIN refused this connection's access (403): it was revoked or has expired. Create a "
    "new setup token in SimpleFIN Bridge and reconnect this connection with it."
)
MSG_PAYMENT_REQUIRED = (
    "SimpleFIN says payment is required (402): renew the SimpleFIN Bridge subscription, then "
    "sync again."
)
MSG_RATE_LIMITED = "SimpleFIN asked us to slow down (429); the sync will be retried later."
MSG_UNREADABLE = "SimpleFIN sent a response that could not be read."


class SimplefinHttpError(ProviderError):
    """An HTTP answer we cannot use; `status` for the engine and the tests."""

    def __init__(self, message: str, *, status: int, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.status = status


class SimplefinNetworkError(ProviderError):
    """The server could not be reached after every retry."""


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def _network_reason(exc: requests.RequestException) -> str:
    text = str(exc).lower()
    if isinstance(exc, requests.Timeout):
        return "timed out"
    if (
        "name or service" in text
        or "nodename" in text
        or "resolve" in text
        or "getaddrinfo" in text
    ):
        return "the host name could not be resolved"
    if "refused" in text:
        return "the connection was refused"
    if "reset" in text or "aborted" in text or "remotedisconnected" in text or "closed" in text:
        return "the connection was dropped"
    return "a network error occurred"


class _Transport:
    """One requests session with timeouts, counted requests and network-error retries."""

    def __init__(
        self,
        *,
        secrets: Callable[[], list[str]],
        retries: int | None,
        backoff_base: float | None,
        timeout: float | None,
        sleep: Callable[[float], None],
        session: requests.Session | None,
    ) -> None:
        self._secrets = secrets
        self.retries = DEFAULT_RETRIES if retries is None else retries
        self.backoff_base = (
            _setting("SIMPLEFIN_RETRY_BASE_DELAY", 1.0) if backoff_base is None else backoff_base
        )
        self.timeout = _setting("PROVIDER_HTTP_TIMEOUT", 30.0) if timeout is None else timeout
        self.sleep = sleep
        self.session = session or requests.Session()
        self.session.trust_env = False  # no .netrc credentials or proxies leaking into requests
        self.requests_made = 0

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter on top: base·2^attempt + U(0, base)."""
        return self.backoff_base * (2**attempt) + random.uniform(0, self.backoff_base)

    def send(
        self,
        method: str,
        url: str,
        *,
        params: list[tuple[str, str]] | None = None,
        headers: dict[str, str] | None = None,
        what: str,
        log_url: str | None = None,
    ) -> tuple[requests.Response, int]:
        """The response and how many attempts it took; SimplefinNetworkError when every
        attempt failed at the network level."""
        safe = log_url or bare_url(url)
        all_headers = {"User-Agent": USER_AGENT, **(headers or {})}
        reason = "a network error occurred"
        for attempt in range(self.retries + 1):
            self.requests_made += 1
            try:
                response = self.session.request(
                    method,
                    url,
                    params=params,
                    headers=all_headers,
                    timeout=self.timeout,
                    allow_redirects=False,
                )
                logger.info(
                    "SimpleFIN %s %s -> %s (attempt %s)",
                    method,
                    safe,
                    response.status_code,
                    attempt + 1,
                )
                return response, attempt + 1
            except requests.RequestException as exc:
                reason = _network_reason(exc)
                logger.warning(
                    "SimpleFIN %s %s failed (attempt %s of %s): %s",
                    method,
                    safe,
                    attempt + 1,
                    self.retries + 1,
                    reason,
                )
                if attempt < self.retries:
                    self.sleep(self.backoff(attempt))
        raise SimplefinNetworkError(
            f"Could not reach SimpleFIN ({what}) after {self.retries + 1} attempts: {reason}. "
            "The sync will be tried again later."
        )

    def redact(self, text: str) -> str:
        return redact(text, self._secrets())


def _retry_after(response: requests.Response) -> float:
    value = response.headers.get("Retry-After", "")
    try:
        return max(float(value), 0.0)
    except ValueError:
        return 3600.0


def _claim_host(claim_url: str) -> str:
    """The claim URL's scheme and host only: its path is the one-time secret."""
    parts = urlsplit(claim_url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/<claim>"


def claim_setup_token(
    token: str,
    *,
    retries: int | None = None,
    backoff_base: float | None = None,
    timeout: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    session: requests.Session | None = None,
) -> str:
    """Exchange a setup token for its access URL (POST once, empty body).

    Raises InvalidSetupToken for a malformed, unknown, used, expired or compromised token,
    SimplefinNetworkError when the claim URL cannot be reached. The access URL returned holds
    the credentials: the caller encrypts it before storing it."""
    claim_url = decode_setup_token(token)
    transport = _Transport(
        secrets=lambda: [claim_url],
        retries=retries,
        backoff_base=backoff_base,
        timeout=timeout,
        sleep=sleep,
        session=session,
    )
    response, attempts = transport.send(
        "POST",
        claim_url,
        headers={"Content-Length": "0"},
        what="claiming the setup token",
        log_url=_claim_host(claim_url),
    )
    if response.status_code == 403:
        raise InvalidSetupToken(MSG_TOKEN_USED if attempts == 1 else MSG_TOKEN_LOST_CLAIM)
    if response.status_code == 404:
        raise InvalidSetupToken(MSG_TOKEN_NOT_FOUND)
    if response.status_code != 200:
        raise SimplefinHttpError(
            f"SimpleFIN answered the claim with HTTP {response.status_code}; try again later.",
            status=response.status_code,
        )
    access_url = response.text.strip()
    AccessUrl.parse(access_url)  # raises when it is not an access URL with credentials
    logger.info("SimpleFIN setup token claimed at %s", _claim_host(claim_url))
    return access_url


class SimplefinClient:
    """Reads one access URL. `requests_made` counts every HTTP attempt (for the budget)."""

    def __init__(
        self,
        access_url: str,
        *,
        include_pending: bool | None = None,
        retries: int | None = None,
        backoff_base: float | None = None,
        timeout: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        session: requests.Session | None = None,
    ) -> None:
        self._access = AccessUrl.parse(access_url)
        self.include_pending = (
            settings.SIMPLEFIN_INCLUDE_PENDING if include_pending is None else include_pending
        )
        self._transport = _Transport(
            secrets=self._access.secrets,
            retries=retries,
            backoff_base=backoff_base,
            timeout=timeout,
            sleep=sleep,
            session=session,
        )
        self._currencies: dict[str, CustomCurrency | None] = {}

    def __repr__(self) -> str:
        return f"SimplefinClient({self._access.base_url!r})"

    @property
    def requests_made(self) -> int:
        return self._transport.requests_made

    @property
    def base_url(self) -> str:
        return self._access.base_url

    def _get_json(self, path: str, params: list[tuple[str, str]] | None, what: str) -> Any:
        response, _ = self._transport.send(
            "GET",
            f"{self._access.base_url}/{path}",
            params=params,
            headers={"Authorization": self._access.authorization, "Accept": "application/json"},
            what=what,
        )
        self._raise_for_status(response)
        try:
            return response.json()
        except ValueError:
            raise SimplefinHttpError(MSG_UNREADABLE, status=response.status_code)

    def _raise_for_status(self, response: requests.Response) -> None:
        status = response.status_code
        if status == 200:
            return
        if status in (401, 403):
            raise SimplefinHttpError(MSG_ACCESS_REVOKED, status=status, requires_update=True)
        if status == 402:
            raise SimplefinHttpError(MSG_PAYMENT_REQUIRED, status=status, permanent=True)
        if status == 429:
            raise SimplefinHttpError(
                MSG_RATE_LIMITED, status=status, retry_after=_retry_after(response)
            )
        raise SimplefinHttpError(
            f"SimpleFIN answered HTTP {status}; the sync will be tried again later.",
            status=status,
        )

    def info(self) -> list[str]:
        """The protocol versions the server speaks (`GET /info`)."""
        payload = self._get_json("info", None, "reading server information")
        versions = payload.get("versions") if isinstance(payload, dict) else None
        if not isinstance(versions, list):
            raise SimplefinHttpError(MSG_UNREADABLE, status=200)
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
            raise SimplefinHttpError(MSG_UNREADABLE, status=200)

    def _custom_currency(self, url: str) -> CustomCurrency | None:
        """`{name, abbr}` of a custom currency URL; None when it cannot be read (cached)."""
        if url not in self._currencies:
            self._currencies[url] = None
            try:
                response, _ = self._transport.send(
                    "GET", url, headers={"Accept": "application/json"}, what="reading a currency"
                )
                data = response.json() if response.status_code == 200 else {}
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
    "SimplefinHttpError",
    "SimplefinNetworkError",
    "claim_setup_token",
    "decode_setup_token",
]
