"""The one HTTP seam every provider client uses: timeouts, request counting, and the mapping
of network failures and HTTP statuses to ProviderError (never a raw exception, never a URL
with credentials in a message).

    http = ProviderHttp(label="Lunch Flow")
    body = http.get_json(url, params={...}, headers={...})
    http.requests_made  # counted for Sync.stats and the SimpleFIN daily budget

Statuses: 401/403 -> requires_update; 402 -> permanent; 429 -> wait `Retry-After` (bounded by
PROVIDER_MAX_RETRY_AFTER, at most PROVIDER_MAX_429_WAITS times) then a transient error;
5xx -> transient; other 4xx -> permanent. Statuses listed in `passthrough` are returned to the
caller instead (Lunch Flow 501 holdings). `network_retries` retries refused/reset/timeout with
exponential backoff and jitter (SimpleFIN asks for 3)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
from django.conf import settings

from providers.types import ProviderError

NETWORK_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)


def redact_url(url: str) -> str:
    """The URL without user:password and without the query string."""
    parts = urlsplit(url)
    host = parts.hostname or ""
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


class ProviderHttp:
    def __init__(
        self,
        *,
        label: str,
        timeout: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        session: requests.Session | None = None,
    ) -> None:
        self.label = label
        self.timeout = timeout if timeout is not None else settings.PROVIDER_HTTP_TIMEOUT
        self.sleep = sleep
        self.session = session or requests.Session()
        self.session.trust_env = False  # no proxies or .netrc credentials from the environment
        self.requests_made = 0

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
    ) -> requests.Response:
        passthrough = set(passthrough)
        waits_429 = 0
        network_failures = 0
        while True:
            self.requests_made += 1
            try:
                response = self.session.request(
                    method,
                    url,
                    params=params,
                    headers=headers,
                    auth=auth,
                    data=data,
                    timeout=self.timeout,
                    allow_redirects=False,
                )
                _ = response.content  # read the whole body now: a reset mid-body fails here
            except NETWORK_ERRORS as exc:
                network_failures += 1
                if network_failures <= network_retries:
                    self.sleep(min(30.0, 2 ** (network_failures - 1)) + random.uniform(0, 0.5))
                    continue
                raise ProviderError(self._network_message(exc, url)) from None
            except requests.RequestException:
                raise ProviderError(
                    f"{self.label} could not be reached at {redact_url(url)}."
                ) from None
            status = response.status_code
            if status in passthrough or 200 <= status < 300:
                return response
            if status == 429:
                wait = _retry_after_seconds(response.headers.get("Retry-After"))
                limit = settings.PROVIDER_MAX_RETRY_AFTER
                if waits_429 < settings.PROVIDER_MAX_429_WAITS and (wait or 1.0) <= limit:
                    waits_429 += 1
                    self.sleep(wait if wait is not None else 1.0)
                    continue
                raise ProviderError(
                    f"{self.label} is rate limiting requests; the sync will be retried later.",
                    retry_after=wait,
                )
            raise self.status_error(status, url, response)

    def get_json(self, url: str, **kwargs: Any) -> Any:
        return self.json_of(self.request("GET", url, **kwargs), url)

    def json_of(self, response: requests.Response, url: str) -> Any:
        try:
            return response.json()
        except (ValueError, json.JSONDecodeError):
            raise ProviderError(
                f"{self.label} returned a response that is not valid JSON "
                f"({redact_url(url)}, HTTP {response.status_code})."
            ) from None

    def _network_message(self, exc: Exception, url: str) -> str:
        where = redact_url(url)
        if isinstance(exc, requests.Timeout):
            return f"{self.label} did not answer in time ({where})."
        if isinstance(exc, (requests.exceptions.ChunkedEncodingError,)):
            return f"The connection to {self.label} was dropped mid-response ({where})."
        return f"Could not connect to {self.label} ({where}): the connection failed or was reset."

    def status_error(self, status: int, url: str, response: requests.Response) -> ProviderError:
        where = redact_url(url)
        upstream = _upstream_message(response)
        suffix = f": {upstream}" if upstream else ""
        if status in (401, 403):
            return ProviderError(
                f"{self.label} refused the credential (HTTP {status}){suffix}. "
                "Update the connection with a new credential.",
                requires_update=True,
            )
        if status == 402:
            return ProviderError(
                f"{self.label} says payment is required (HTTP 402){suffix}.", permanent=True
            )
        if status >= 500:
            return ProviderError(f"{self.label} had a server error (HTTP {status}) at {where}.")
        return ProviderError(
            f"{self.label} rejected the request (HTTP {status}) at {where}{suffix}.",
            permanent=True,
        )


def _upstream_message(response: requests.Response) -> str:
    """The provider's own `message`/`error`, short and single-line, if it sent JSON."""
    try:
        body = response.json()
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    text = body.get("message") or body.get("error") or ""
    if not isinstance(text, str):
        return ""
    return " ".join(text.split())[:200]
