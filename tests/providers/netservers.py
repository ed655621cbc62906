"""Small raw TCP servers for the outbound-safety and deadline tests, and a recorder of every
socket connect the process makes (a Python audit hook).

    with TcpServer("silent") as server:     # accepts, reads, never answers
        server.url, server.connections       # connections accepted so far
    TcpServer("drip")                        # starts a response, a byte every 0.2 s for 5 s
    TcpServer("redirect", location=url)      # 302 to `location`
    TcpServer("ok")                          # 200 with a tiny JSON body
    with connects() as seen: ...             # addresses of every socket.connect() meanwhile
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from collections.abc import Iterator

_RECORDERS: list[list[tuple]] = []
_HOOKED = False


def _audit(event: str, args: tuple) -> None:
    if event == "socket.connect" and _RECORDERS:
        for recorder in _RECORDERS:
            recorder.append(args[1])


@contextlib.contextmanager
def connects() -> Iterator[list[tuple]]:
    """Every address this process connects a socket to inside the block."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)  # cannot be removed: it records only inside this block
        _HOOKED = True
    seen: list[tuple] = []
    _RECORDERS.append(seen)
    try:
        yield seen
    finally:
        _RECORDERS.remove(seen)


class TcpServer:
    def __init__(
        self,
        behaviour: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        location: str = "",
    ) -> None:
        self.behaviour = behaviour
        self.location = location
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, port))
        self._listener.listen(16)
        self._listener.settimeout(0.1)
        self.host = host
        self.port = self._listener.getsockname()[1]
        self.connections = 0
        self._open: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.netloc}"

    def __enter__(self) -> TcpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(2)
        for sock in self._open:
            with contextlib.suppress(OSError):
                sock.close()
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                continue
            self.connections += 1
            self._open.append(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        with contextlib.suppress(OSError):
            conn.recv(65536)
        try:
            if self.behaviour == "redirect":
                conn.sendall(
                    b"HTTP/1.1 302 Found\r\nLocation: "
                    + self.location.encode()
                    + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            elif self.behaviour == "ok":
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 2\r\nConnection: close\r\n\r\n{}"
                )
            elif self.behaviour == "drip":
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                ends = time.monotonic() + 5.0  # then it hangs up: a broken client fails, not hangs
                while not self._stop.is_set() and time.monotonic() < ends:
                    conn.sendall(b"a")
                    time.sleep(0.2)
            else:  # silent: hold the connection open until the end
                self._stop.wait()
        except OSError:
            return
