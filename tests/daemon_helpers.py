"""The real daemons as subprocesses for end-to-end tests: started with
their own command lines, every line they write kept in a log file, their
resident memory readable from /proc. Also blocking well-behaved and
hostile peers for their listeners."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from wreck.protocol import NEED_DATA, ConnectionClosed, ControlConnection, Error, Get, Idle, Ready, Role

HOST = "127.0.0.1"
START_TIMEOUT = 20.0
IO_TIMEOUT = 10.0
LISTENING = r"listening on [\d.]+:(\d+)"


class Daemon:
    """`python -m MODULE ARGS`: stdout and stderr both go to `log`."""

    def __init__(self, module: str, args: list[str], log: Path, *, env: dict | None = None,
                 wait_for: str | None = LISTENING) -> None:
        self.log = log
        environ = {k: v for k, v in os.environ.items() if k != "WRECK_SECRET"}
        environ.update(env or {})
        with open(log, "w") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", module, *args], stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=environ)
        self.port = 0
        if wait_for:
            self.listening(wait_for)

    def listening(self, pattern: str = LISTENING) -> int:
        """Wait until the daemon says it listens; its port."""
        self.port = int(self.wait_for(pattern)[1])
        return self.port

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, pattern: str, timeout: float = START_TIMEOUT) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if found := re.search(pattern, self.text()):
                return found
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(f"{self.proc.args[2]}: no {pattern!r} (exit {self.proc.poll()})\n{self.text()}")

    def rss_kib(self) -> int:
        """Resident set size now, KiB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", status)[1])

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait(self, timeout: float = START_TIMEOUT) -> int:
        return self.proc.wait(timeout)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(START_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def read_events(conn, sock: socket.socket, until=lambda event: False) -> list:
    """Decode what `sock` delivers into `conn` until the server closes or until(event); the events."""
    events: list = []
    while True:
        event = conn.next_event()
        if event is NEED_DATA:
            try:
                data = sock.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            conn.receive_data(data)
            continue
        events.append(event)
        if type(event) in (Error, ConnectionClosed) or until(event):
            return events


def raw_exchange(port: int, data: bytes) -> bytes:
    """Connect, send `data`, shut our side, read everything the listener says until it closes."""
    return exchange(socket.create_connection((HOST, port), timeout=IO_TIMEOUT), data)


def exchange(sock: socket.socket, data: bytes) -> bytes:
    """Send `data` on `sock`, shut our side, read until the server closes; closes `sock`."""
    said = b""
    with sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # EPIPE, ECONNRESET, ENOTCONN: the server closed before reading it all
            pass  # what it said before closing is still queued
        while True:
            try:
                chunk = sock.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            said += chunk
    return said


class ControlClient:
    """A well-behaved spider's control connection, blocking."""

    def __init__(self, port: int, *, secret: bytes = b"", name: str = "good-spider") -> None:
        self.sock = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn = ControlConnection(Role.CLIENT, secret=secret, nonce=os.urandom(32), name=name)
        first = read_events(self.conn, self.sock, until=lambda e: True)[0]
        self.answer = first
        if type(first) is not Error:
            self.sock.sendall(self.conn.authenticate())
            self.answer = read_events(self.conn, self.sock, until=lambda e: type(e) is Ready)[-1]

    @property
    def ready(self) -> bool:
        return type(self.answer) is Ready

    def ping(self) -> object:
        """GET 1; the server's answer (an IDLE hint when it has nothing to hand out)."""
        self.sock.sendall(self.conn.send(Get(1)))
        return read_events(self.conn, self.sock, until=lambda e: type(e) is Idle or hasattr(e, "url"))[-1]

    def close(self) -> None:
        self.sock.close()
