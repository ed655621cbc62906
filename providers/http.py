"""The one HTTP seam every provider client uses: timeouts, retries, request counting and
budget, outbound address safety, and the mapping of network failures and HTTP statuses to
ProviderError (never a raw exception, never a URL with credentials in a message).

    http = ProviderHttp(label="Lunch Flow")             # worker: PROVIDER_HTTP_TIMEOUT an attempt
    http = ProviderHttp.for_request(label="SimpleFIN")  # API/admin request: that in all
    body = http.get_json(url, params={...}, headers={...})
    http.requests_made  # counted for Sync.stats and the SimpleFIN daily budget
    http.limit_requests(n, message=...)  # the (n+1)th request raises instead of being sent

Per call: `network_retries` retries refused/reset/timeout/DNS failures after
`backoff_base·2^n + U(0, backoff_base)` seconds (SimpleFIN asks for 3); `send_once` sends
exactly once, never retried or re-sent (a SimpleFIN claim URL works once); `public_only`
refuses a user-supplied URL whose host resolves to a non-public address (providers.outbound;
`PROVIDER_ALLOW_PRIVATE_URLS` lifts it for local fakes); `counted=False` leaves the request
out of `requests_made` and the budget; `messages` replaces the text of a status.

Statuses: 401/403 -> requires_update; 402 -> permanent; 429 -> wait `Retry-After` (bounded by
PROVIDER_MAX_RETRY_AFTER, at most PROVIDER_MAX_429_WAITS times) then a transient error;
5xx -> transient; other 4xx and 3xx (redirects are never followed) -> permanent. Statuses
listed in `passthrough` are returned to the caller instead (Lunch Flow 501 holdings).

Time: each attempt ends by PROVIDER_HTTP_TIMEOUT (`timeout`) from its start, whole response
read; with `total_timeout` every attempt, backoff and 429 wait of this object together end by
that many seconds after its creation: a retry or a wait that would not fit is not made."""

from __future__ import annotations

import base64
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
import requests
from django.conf import settings

from providers.outbound import Attempt, OutboundAdapter, UnsafeAddress, attempt_scope
from providers.types import ProviderError

_UTF8 = frozenset({"utf-8", "utf8"})

logger = logging.getLogger("providers.http")

NETWORK_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)
MAX_BACKOFF = 60.0


class ProviderNetworkError(ProviderError):
    """Every attempt failed at the network level; `reason` says how, in words."""

    def __init__(self, message: str, *, reason: str, attempts: int) -> None:
        super().__init__(message)
        self.reason = reason
        self.attempts = attempts


def redact_url(url: str) -> str:
    """The URL without user:password and without the query string."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


def network_reason(exc: Exception, *, expired: bool = False) -> str:
    if expired or isinstance(exc, requests.Timeout):
        return "it did not answer in time"
    if isinstance(
        exc, (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError)
    ):
        return "the connection was dropped mid-response"
    if isinstance(exc, requests.exceptions.SSLError):
        return "the secure connection failed (TLS or certificate)"
    text = repr(exc).lower()
    if any(w in text for w in ("resolve", "name or service", "nodename", "getaddrinfo")):
        return "the host name could not be resolved"
    if "refused" in text:
        return "the connection was refused"
    if any(w in text for w in ("reset", "aborted", "disconnected", "closed", "broken pipe")):
        return "the connection was dropped"
    return "the connection failed"


@dataclass(frozen=True)
class _Limit:
    until: int  # requests_made may reach this, not pass it
    message: str
    retry_after: float | None


class ProviderHttp:
    def __init__(
        self,
        *,
        label: str,
        timeout: float | None = None,
        total_timeout: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.label = label
        self.timeout = timeout if timeout is not None else settings.PROVIDER_HTTP_TIMEOUT
        self.deadline = time.monotonic() + total_timeout if total_timeout is not None else None
        self.sleep = sleep
        self.session = requests.Session()
        self.session.trust_env = False  # no proxies or .netrc credentials from the environment
        for scheme in ("http://", "https://"):
            self.session.mount(scheme, OutboundAdapter())
        self.requests_made = 0
        self._limit: _Limit | None = None

    @classmethod
    def for_request(cls, *, label: str) -> ProviderHttp:
        """For provider calls inside an API or admin request: all of them together, retries
        and waits included, end within PROVIDER_HTTP_TIMEOUT. Long retries are the worker's."""
        return cls(label=label, total_timeout=settings.PROVIDER_HTTP_TIMEOUT)

    def limit_requests(self, count: int, *, message: str, retry_after: float | None = None) -> None:
        """At most `count` more counted requests; the next one raises ProviderError(message)."""
        self._limit = _Limit(self.requests_made + max(count, 0), message, retry_after)

    def _fits(self, seconds: float) -> bool:
        return self.deadline is None or time.monotonic() + seconds < self.deadline

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Any = None,
        headers: dict[str, str] | None = None,
        auth: tuple[str, str] | None = None,
        data: Any = None,
        passthrough: Iterable[int] = (),
        network_retries: int = 0,
        backoff_base: float = 1.0,
        send_once: bool = False,
        public_only: bool = False,
        counted: bool = True,
        messages: Mapping[int, str] | None = None,
        what: str | None = None,
        shown_url: str | None = None,
    ) -> requests.Response:
        passthrough = set(passthrough)
        shown = shown_url or redact_url(url)
        where = f"{what} at {shown}" if what else shown
        public_only = public_only and not settings.PROVIDER_ALLOW_PRIVATE_URLS
        retries = 0 if send_once else network_retries
        max_waits = 0 if send_once else settings.PROVIDER_MAX_429_WAITS
        waits_429 = 0
        attempts = 0
        while True:
            if counted and self._limit and self.requests_made >= self._limit.until:
                raise ProviderError(self._limit.message, retry_after=self._limit.retry_after)
            now = time.monotonic()
            ends = (
                now + self.timeout
                if self.deadline is None
                else min(now + self.timeout, self.deadline)
            )
            if ends - now <= 0.001:
                raise ProviderNetworkError(
                    f"Could not reach {self.label} ({where}): it did not answer in time.",
                    reason="it did not answer in time",
                    attempts=attempts,
                )
            attempts += 1
            self.requests_made += int(counted)
            attempt = Attempt(ends, public_only=public_only, what=f"The {self.label} URL {shown}")
            try:
                with attempt_scope(attempt):
                    response = self.session.request(
                        method,
                        url,
                        params=params,
                        headers=headers,
                        auth=auth,
                        data=data,
                        timeout=ends - now,
                        allow_redirects=False,
                    )
                    _ = response.content  # the whole body now: a reset mid-body fails here
                    if attempt.expired:  # cut by the deadline: what was read is not an answer
                        raise requests.Timeout()
            except UnsafeAddress:
                self.requests_made -= int(counted)  # refused before any connection: not sent
                logger.warning("%s %s %s refused: not a public address", self.label, method, shown)
                raise
            except NETWORK_ERRORS as exc:
                reason = network_reason(exc, expired=attempt.expired)
                logger.warning(
                    "%s %s %s failed (attempt %s): %s", self.label, method, where, attempts, reason
                )
                backoff = min(MAX_BACKOFF, backoff_base * 2 ** (attempts - 1))
                backoff += random.uniform(0, backoff_base)
                if attempts <= retries and self._fits(backoff):
                    self.sleep(backoff)
                    continue
                after = f" after {attempts} attempts" if attempts > 1 else ""
                raise ProviderNetworkError(
                    f"Could not reach {self.label} ({where}){after}: {reason}.",
                    reason=reason,
                    attempts=attempts,
                ) from None
            except requests.RequestException:
                raise ProviderError(f"{self.label} could not be reached at {shown}.") from None
            status = response.status_code
            logger.info("%s %s %s -> %s (attempt %s)", self.label, method, shown, status, attempts)
            if status in passthrough or 200 <= status < 300:
                return response
            if status == 429:
                wait = _retry_after_seconds(response.headers.get("Retry-After"))
                pause = wait if wait is not None else 1.0
                if (
                    waits_429 < max_waits
                    and pause <= settings.PROVIDER_MAX_RETRY_AFTER
                    and self._fits(pause)
                ):
                    waits_429 += 1
                    self.sleep(pause)
                    continue
                raise ProviderError(
                    (messages or {}).get(429)
                    or f"{self.label} is rate limiting requests; the sync will be retried later.",
                    retry_after=wait,
                )
            raise self.status_error(status, shown, response, messages)

    def get_json(self, url: str, **kwargs: Any) -> Any:
        return self.json_of(self.request("GET", url, **kwargs), url)

    def json_of(self, response: requests.Response, url: str) -> Any:
        try:
            return response_json(response)
        except ValueError:
            raise ProviderError(
                f"{self.label} returned a response that is not valid JSON "
                f"({redact_url(url)}, HTTP {response.status_code})."
            ) from None

    def status_error(
        self,
        status: int,
        where: str,
        response: requests.Response,
        messages: Mapping[int, str] | None = None,
    ) -> ProviderError:
        upstream = _upstream_message(response)
        # one full stop after the upstream message, not "..": the sentence adds its own
        suffix = f": {upstream.rstrip('. ')}" if upstream else ""
        custom = (messages or {}).get(status)
        if status in (401, 403):
            return ProviderError(
                custom
                or f"{self.label} refused the credential (HTTP {status}){suffix}. "
                "Update the connection with a new credential.",
                requires_update=True,
            )
        if status == 402:
            return ProviderError(
                custom or f"{self.label} says payment is required (HTTP 402){suffix}.",
                permanent=True,
            )
        if status >= 500:
            return ProviderError(
                custom or f"{self.label} had a server error (HTTP {status}) at {where}."
            )
        if 300 <= status < 400:
            return ProviderError(
                custom
                or f"{self.label} answered with a redirect (HTTP {status}) at {where}; "
                "redirects are not followed.",
                permanent=True,
            )
        return ProviderError(
            custom or f"{self.label} rejected the request (HTTP {status}) at {where}{suffix}.",
            permanent=True,
        )


def response_json(response: requests.Response) -> Any:
    """A response's JSON body; ValueError when it is not JSON.

    Read by orjson: a 5,000-row page of transactions 2-3x faster than by json, in the sync's
    read-ahead thread, whose reading holds the interpreter lock against the thread writing
    the previous account. What orjson refuses (NaN, integers past 64 bits, a byte-order mark,
    lone surrogates, a body in another encoding) is read by json as before."""
    if (response.encoding or "utf-8").lower() in _UTF8:
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError:
            pass
    return response.json()


def _upstream_message(response: requests.Response) -> str:
    """The provider's own `message`/`error`, short and single-line, if it sent JSON."""
    try:
        body = response_json(response)
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    text = body.get("message") or body.get("error") or ""
    if not isinstance(text, str):
        return ""
    for secret in _sent_secrets(response):
        text = text.replace(secret, "***")  # an upstream that echoes the key back (issue 10)
    return " ".join(text.split())[:200]


def _sent_secrets(response: requests.Response) -> list[str]:
    """The credentials the request carried (API key, bearer token, basic user and password)."""
    request = getattr(response, "request", None)
    headers = getattr(request, "headers", None) or {}
    found: list[str] = []
    for name in ("x-api-key", "Authorization"):
        value = headers.get(name)
        if not value:
            continue
        found.append(value)
        scheme, _, token = value.partition(" ")
        if token:
            found.append(token)
            if scheme.lower() == "basic":
                try:
                    user, _, password = base64.b64decode(token).decode().partition(":")
                except (ValueError, UnicodeDecodeError):
                    continue
                found += [user, password]
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)
