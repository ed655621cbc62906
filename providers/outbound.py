"""Outbound connections for provider requests: public addresses only, and a hard time limit.

`ProviderHttp` (providers.http) mounts `OutboundAdapter` on its session. Every new
connection resolves the host once, checks every address it resolved to and connects to one
of those checked addresses (the Host header, TLS SNI and certificate check keep the host
name), so a name that answers a public address to the check and a private one to the connect
(DNS rebinding) cannot pass. With `public_only` an address that is loopback, private,
link-local, multicast, reserved, unspecified or otherwise not globally routable refuses the
request before any socket exists: no connection, nothing to time, the same answer whatever
listens there (no scanning oracle).

Each attempt also has a deadline: the sockets it uses are shut down by a timer when the
deadline passes, so a server that accepts and never answers, or drips a byte at a time, holds
the caller no longer than the deadline (socket timeouts alone bound each read, not the sum).

The policy reaches the connection through a context variable set around one attempt
(`attempt_scope`): requests and urllib3 run the attempt synchronously in this thread."""

from __future__ import annotations

import contextlib
import contextvars
import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

from providers.types import ProviderError

MSG_NOT_PUBLIC = (
    "{what} points to an address that is not on the public internet (a loopback, private, "
    "link-local, multicast or reserved address); it was not contacted."
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class UnsafeAddress(ProviderError):
    """A user-supplied URL resolved to an address the service may not contact. Permanent:
    the same URL will resolve the same way on a retry."""

    def __init__(self, what: str) -> None:
        super().__init__(MSG_NOT_PUBLIC.format(what=what), permanent=True)


def is_public_address(address: str) -> bool:
    """True for a globally routable unicast address; IPv4 inside IPv6 (mapped, 6to4, NAT64)
    is judged as the IPv4 address it carries."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public_address(str(embedded))
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
    )


@dataclass
class Attempt:
    """One request attempt: its policy, its deadline and the sockets it has used."""

    deadline: float  # time.monotonic()
    public_only: bool = False
    what: str = "The URL"
    expired: bool = False
    _sockets: list[socket.socket] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def remaining(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)

    def register(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shutdown(sock)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    # The plain socket's shutdown, also under TLS: the blocked read sees end-of-file at once.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


_CURRENT: contextvars.ContextVar[Attempt | None] = contextvars.ContextVar(
    "provider_attempt", default=None
)


@contextlib.contextmanager
def attempt_scope(attempt: Attempt) -> Iterator[Attempt]:
    token = _CURRENT.set(attempt)
    timer = threading.Timer(attempt.remaining(), attempt.expire)
    timer.daemon = True
    timer.start()
    try:
        yield attempt
    finally:
        timer.cancel()
        _CURRENT.reset(token)


def _resolve(host: str, port: int, timeout: float) -> list[tuple]:
    """getaddrinfo, given up after `timeout` (a resolver can hang far longer)."""
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        pass
    else:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found: dict[str, Any] = {}

    def run() -> None:
        try:
            found["addresses"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            found["error"] = exc

    worker = threading.Thread(target=run, name="provider-resolve", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError(f"resolving {host} took longer than {timeout:.1f}s")
    if "error" in found:
        raise found["error"]
    return found["addresses"]


class _CheckedConnectionMixin:
    """Resolve once, check, connect to the checked address; register sockets with the
    attempt so its deadline can end them."""

    host: str
    port: int
    timeout: Any
    source_address: Any
    socket_options: Any
    _dns_host: str
    sock: socket.socket | None

    def _new_conn(self) -> socket.socket:
        attempt = _CURRENT.get()
        budget = attempt.remaining() if attempt else None
        timeout = self.timeout if isinstance(self.timeout, (int, float)) else None
        if budget is not None:
            timeout = min(timeout, budget) if timeout is not None else budget
        try:
            addresses = _resolve(self._dns_host, self.port, timeout or 30.0)
        except TimeoutError as exc:
            raise ConnectTimeoutError(self, f"Connection to {self.host} timed out.") from exc
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc  # type: ignore[arg-type]
        public = bool(addresses) and all(is_public_address(a[4][0]) for a in addresses)
        if attempt is not None and attempt.public_only and not public:
            raise UnsafeAddress(attempt.what)
        return self._connect_to(addresses, timeout)

    def _connect_to(self, addresses: list[tuple], timeout: float | None) -> socket.socket:
        error: OSError | None = None
        for family, kind, proto, _, address in addresses:
            sock = socket.socket(family, kind, proto)
            try:
                for option in self.socket_options or ():
                    sock.setsockopt(*option)
                sock.settimeout(timeout)
                if self.source_address:
                    sock.bind(self.source_address)
                sock.connect(address)
                return sock
            except TimeoutError as exc:
                sock.close()
                raise ConnectTimeoutError(self, f"Connection to {self.host} timed out.") from exc
            except OSError as exc:
                sock.close()
                error = exc
        raise NewConnectionError(
            self,  # type: ignore[arg-type]
            f"Failed to establish a new connection: {error or 'no address'}",
        )

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        attempt = _CURRENT.get()
        if attempt is not None:
            attempt.register(self.sock)  # under TLS the wrapped socket, not the raw one

    def request(self, *args: Any, **kwargs: Any) -> None:
        attempt = _CURRENT.get()
        if attempt is not None:
            attempt.register(self.sock)  # a kept-alive socket from an earlier attempt
        super().request(*args, **kwargs)  # type: ignore[misc]


class CheckedHTTPConnection(_CheckedConnectionMixin, HTTPConnection):
    pass


class CheckedHTTPSConnection(_CheckedConnectionMixin, HTTPSConnection):
    pass


class _CheckedHTTPPool(HTTPConnectionPool):
    ConnectionCls = CheckedHTTPConnection


class _CheckedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = CheckedHTTPSConnection


class OutboundAdapter(HTTPAdapter):
    """requests' adapter with the checked connections above."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": _CheckedHTTPPool,
            "https": _CheckedHTTPSPool,
        }
