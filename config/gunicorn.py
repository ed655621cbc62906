"""gunicorn settings for every way the service is served (`manage.py runall`, the Dockerfile,
compose.yaml): `gunicorn -c python:config.gunicorn config.wsgi:application ...`.

- Requests gunicorn refuses before Django sees them (a request line or a header over its
  limits, a malformed header such as a NUL in Content-Type) answer in the API's one JSON error
  shape instead of gunicorn's HTML page, and never echo what was sent.
- Access and error log lines carry no query-string secrets (`?api_key=`, `?token=`, ...) and
  no API key or credential headers, whatever `--access-logformat` asks for.
"""

from __future__ import annotations

import json
from typing import Any

from gunicorn import util
from gunicorn.glogging import Logger

from finance.logging import RedactSecretsFilter, redact_query

# The longest request line gunicorn allows (its default is 4094): list filters with many ids
# make long query strings. Longer lines, and header fields over 8190 bytes, get a JSON 414/431.
limit_request_line = 8190
limit_request_field_size = 8190
logger_class = "config.gunicorn.RedactingLogger"

SECRET_HEADERS = frozenset({"x-api-key", "authorization", "cookie", "proxy-authorization"})
_ERRORS = {
    400: ("bad_request", "The request could not be understood."),
    403: ("forbidden", "The request is not allowed."),
    414: ("uri_too_long", "The request line is longer than the server accepts."),
    417: ("expectation_failed", "The Expect header cannot be met."),
    431: ("headers_too_large", "A request header, or their number, is over the server's limit."),
    500: ("internal_error", "The server could not handle the request."),
    501: ("not_implemented", "The request's transfer coding is not supported."),
}


def write_json_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """Stands in for gunicorn's `util.write_error` (an HTML page quoting the request).
    `mesg` is gunicorn's description of what was wrong, often the client's own bytes: not sent."""
    code, message = _ERRORS.get(status_int, _ERRORS[400])
    body = json.dumps({"error": code, "message": message}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


def on_starting(server: Any) -> None:
    # gunicorn's workers answer a request they cannot parse through this one function
    # (gunicorn.workers.base.Worker.handle_error); replaced before the workers fork.
    util.write_error = write_json_error


class RedactingLogger(Logger):
    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            if not any(isinstance(f, RedactSecretsFilter) for f in log.filters):
                log.addFilter(RedactSecretsFilter())

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> dict:
        atoms = super().atoms(resp, req, environ, request_time)
        for name, value in atoms.items():
            header = name[1:-2] if name.startswith("{") and name.endswith(("}i", "}e")) else ""
            if header.replace("_", "-").removeprefix("http-") in SECRET_HEADERS:
                atoms[name] = "[REDACTED]"
            elif isinstance(value, str):
                atoms[name] = redact_query(value)
        return atoms
