from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONObjectParser(parsers.JSONParser):
    """JSON whose top level must be an object; deep nesting and bad UTF-8 are a 400."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = stream.read() if stream is not None else b""
        if not raw:
            return {}
        try:
            data = json.loads(
                raw.decode("utf-8"), parse_float=Decimal, parse_constant=_reject_constant
            )
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ParseError(_short(exc)) from None
        if not isinstance(data, dict):
            raise ParseError("the top level must be a JSON object")
        return data


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a valid JSON number")


def _short(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "the JSON is nested too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return "the body is not valid UTF-8"
    return str(exc)[:200]
