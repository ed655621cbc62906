"""Access URLs and setup tokens: split the Basic credentials off, redact them everywhere.

An access URL reads `https://USER:PASS@host/path`. The credentials are sent only as an
`Authorization: Basic` header; every URL that reaches a log line, an exception or a stored
error is the bare one (`https://host/path`), and every upstream text is passed through
`redact()` before anyone sees it."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit, urlunsplit

from providers.types import ProviderError

MSG_TOKEN_EMPTY = "The SimpleFIN setup token is empty."
MSG_TOKEN_NOT_BASE64 = (
    "The SimpleFIN setup token is not valid base64. Copy the whole token from SimpleFIN "
    "Bridge and try again."
)
MSG_TOKEN_NOT_URL = (
    "The SimpleFIN setup token does not decode to an http(s) claim URL. Copy the whole token "
    "from SimpleFIN Bridge and try again."
)
MSG_ACCESS_URL_INVALID = (
    "SimpleFIN answered the claim with something that is not an access URL with credentials."
)

_URL_WITH_USERINFO = re.compile(r"(?i)\b(https?://)[^/\s@]+@")


class InvalidSetupToken(ProviderError):
    """The setup token cannot be used (malformed, already claimed, expired): a 422 to the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message, permanent=True)


@dataclass(frozen=True)
class AccessUrl:
    """A parsed access URL. `repr()` and `str()` never show the credentials."""

    base_url: str  # without credentials and without a trailing slash
    username: str = field(repr=False)
    password: str = field(repr=False)

    @classmethod
    def parse(cls, url: str) -> AccessUrl:
        try:
            parts = urlsplit((url or "").strip())
            port = parts.port  # raises ValueError on a malformed port
        except ValueError:
            raise ProviderError(MSG_ACCESS_URL_INVALID, permanent=True)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProviderError(MSG_ACCESS_URL_INVALID, permanent=True)
        if parts.username is None or parts.password is None:
            raise ProviderError(MSG_ACCESS_URL_INVALID, permanent=True)
        host = parts.hostname
        if ":" in host:  # IPv6 literal
            host = f"[{host}]"
        netloc = f"{host}:{port}" if port else host
        base = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
        return cls(base, unquote(parts.username), unquote(parts.password))

    @property
    def authorization(self) -> str:
        raw = f"{self.username}:{self.password}".encode()
        return "Basic " + base64.b64encode(raw).decode("ascii")

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).netloc

    def secrets(self) -> list[str]:
        return [s for s in (self.username, self.password, self.authorization) if s]

    def __str__(self) -> str:
        return self.base_url


def decode_setup_token(token: str) -> str:
    """The claim URL inside a setup token, or InvalidSetupToken saying what is wrong."""
    text = "".join((token or "").split())
    if not text:
        raise InvalidSetupToken(MSG_TOKEN_EMPTY)
    padded = text.translate(str.maketrans("-_", "+/")) + "=" * (-len(text) % 4)
    try:
        decoded = base64.b64decode(padded.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise InvalidSetupToken(MSG_TOKEN_NOT_BASE64)
    try:
        url = decoded.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise InvalidSetupToken(MSG_TOKEN_NOT_URL)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - validates the port
    except ValueError:
        raise InvalidSetupToken(MSG_TOKEN_NOT_URL)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise InvalidSetupToken(MSG_TOKEN_NOT_URL)
    return url


def bare_url(url: str) -> str:
    """`url` without user info, query or fragment: safe to show."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        return "<unparseable url>"


def redact(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """`text` with any URL user info and each of `secrets` replaced by `***`."""
    out = _URL_WITH_USERINFO.sub(r"\1***@", str(text))
    for secret in sorted({s for s in secrets if s and len(s) >= 3}, key=len, reverse=True):
        out = out.replace(secret, "***")
    return out
