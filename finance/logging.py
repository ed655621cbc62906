"""A log filter that redacts secrets that might slip into a message, and the query-string
redaction that access logs use (config/gunicorn.py)."""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote_plus

_PATTERNS = [
    re.compile(r"pfk_[a-z0-9]{8}_[A-Za-z0-9_\-]+"),  # our API keys
    re.compile(r"(?<=://)[^/@\s:]+:[^/@\s]+(?=@)"),  # user:password@ in URLs
    re.compile(
        r"(?i)(x-api-key|authorization|api_key|setup_token)(['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+"
    ),
]


# Query-string parameters whose value is a secret wherever they appear (a key sent as
# `?api_key=` is refused, but the request line still reaches the access log).
QUERY_SECRETS = frozenset({"api_key", "apikey", "key", "token", "access_url", "setup_token"})
_QUERY_PAIR = re.compile(r"(^|[?&;])([^=&;?#\s]+)=([^&;#\s\"']*)")


def redact_query(text: str) -> str:
    """`text` with the value of every secret query parameter replaced (names compared after
    percent-decoding, case-insensitively)."""
    if "=" not in text:
        return text

    def clean(match: re.Match[str]) -> str:
        lead, name, value = match.groups()
        if unquote_plus(name).strip().lower() in QUERY_SECRETS and value:
            value = "[REDACTED]"
        return f"{lead}{name}={value}"

    return _QUERY_PAIR.sub(clean, text)


def redact(text: str) -> str:
    text = redact_query(text)
    text = _PATTERNS[0].sub("pfk_[REDACTED]", text)
    text = _PATTERNS[1].sub("[REDACTED]", text)
    return _PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}[REDACTED]", text)


class RedactSecretsFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
