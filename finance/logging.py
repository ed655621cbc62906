"""A log filter that redacts secrets that might slip into a message."""

from __future__ import annotations

import logging
import re

_PATTERNS = [
    re.compile(r"pfk_[a-z0-9]{8}_[A-Za-z0-9_\-]+"),  # our API keys
    re.compile(r"(?<=://)[^/@\s:]+:[^/@\s]+(?=@)"),  # user:password@ in URLs
    re.compile(
        r"(?i)(x-api-key|authorization|api_key|setup_token)(['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+"
    ),
]


def redact(text: str) -> str:
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
