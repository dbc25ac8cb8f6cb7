# A listener that must never be reached: it accepts on one port at a set of
# loopback addresses the crawl is forbidden to contact, records who came
# (and the first bytes they sent), and closes. A test proves "zero
# connections reached it" with Tripwire.hits() == [] -- stronger than
# reading a crawler's own logs. Blocking sockets on a thread; a context
# manager.
"""Tripwire: a forbidden-address listener that counts every accept."""

from __future__ import annotations

import dataclasses
import errno
import selectors
import socket
import threading

BIND_ATTEMPTS = 20
"""Tries at finding one port free on every address."""
FIRST_BYTES = 512
"""Bytes of the request kept per hit: enough to see the request line and Host."""
READ_TIMEOUT = 0.5
"""Seconds a hit is given to send its first bytes before it is closed."""


@dataclasses.dataclass(frozen=True)
class Hit:
    """One connection that reached the tripwire."""

    local: str
    peer: str
    first_bytes: bytes


class Tripwire:
    """with Tripwire(["127.99.0.1", "::1"]) as wire: ... wire.port ... wire.hits()"""

    def __init__(self, ips: list[str]) -> None:
        self.ips = list(ips)
        self.port = 0
        self._socks: list[socket.socket] = []
        self._hits: list[Hit] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tripwire", daemon=True)

    def __enter__(self) -> Tripwire:
        self._bind()
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join(5)
        for sock in self._socks:
            sock.close()

    def hits(self) -> list[Hit]:
        """Every connection so far."""
        with self._lock:
            return list(self._hits)

    def _bind(self) -> None:
        for _ in range(BIND_ATTEMPTS):
            socks: list[socket.socket] = []
            port = 0
            try:
                for ip in self.ips:
                    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
                    sock = socket.socket(family, socket.SOCK_STREAM)
                    socks.append(sock)
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    sock.bind((ip, port))
                    port = sock.getsockname()[1]
                    sock.listen(64)
                self._socks, self.port = socks, port
                return
            except OSError as exc:
                for sock in socks:
                    sock.close()
                if exc.errno != errno.EADDRINUSE:
                    raise
        raise OSError(errno.EADDRINUSE, f"no port free on all of {self.ips}")

    def _run(self) -> None:
        with selectors.DefaultSelector() as sel:
            for sock in self._socks:
                sel.register(sock, selectors.EVENT_READ)
            while not self._stop.is_set():
                for key, _ in sel.select(0.1):
                    conn, peer = key.fileobj.accept()
                    with conn:
                        conn.settimeout(READ_TIMEOUT)
                        try:
                            first = conn.recv(FIRST_BYTES)
                        except OSError:
                            first = b""
                        hit = Hit(conn.getsockname()[0], peer[0], first)
                    with self._lock:
                        self._hits.append(hit)
