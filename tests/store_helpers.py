"""Store tests' tools: a blocking spider-side client over real TCP, a server
run in a background thread, and a subprocess storeserver."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from wreck.protocol import NEED_DATA, Ack, ConnectionClosed, Error, Ready, Record, Role, Specific, StoreConnection, http_enum
from wreck.storeserver.server import StoreServer
from wreck.storeserver.settings import StoreSettings

HOST = "127.0.0.1"
TIMEOUT = 15.0


def make_record(doc_id: int, *, size: int = 2000, url: str | None = None, status: int = 200) -> Record:
    body = (f"<html><body><h1>doc {doc_id}</h1>" + "<p>lorem ipsum dolor sit amet</p>" * (size // 32) + "</body></html>").encode()
    head = f"HTTP/1.1 {status} OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    return Record(doc_id, status < 400, Specific.OK if status < 300 else Specific.HTTP_ERROR, http_enum(status), 17 + doc_id % 100,
                  url or f"http://127.0.0.1:8080/page/{doc_id}", None, head + body)  # fmt: skip


class Client:
    """A spider's end of one store connection, blocking, for tests."""

    def __init__(self, port: int, *, secret: bytes = b"", name: str = "test-spider", handshake: bool = True,
                 crawl_id: str = "", caps: tuple[str, ...] = ()) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=TIMEOUT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn = StoreConnection(Role.CLIENT, secret=secret, nonce=os.urandom(32), name=name, crawl_id=crawl_id,
                                    caps=caps)
        self.settings: dict[str, str] = {}
        self.events: list = []
        if handshake:
            self.handshake()

    def handshake(self) -> object:
        """Complete the handshake; the Ready event, or the Error received."""
        first = self._next()
        if type(first) is Error:
            return first
        self.sock.sendall(self.conn.authenticate())
        event = self._next()
        if type(event) is Ready:
            self.settings = event.settings
        return event

    def _next(self) -> object:
        while True:
            event = self.conn.next_event()
            if event is not NEED_DATA:
                return event
            data = self.sock.recv(65536)
            self.conn.receive_data(data)

    def send(self, records: list[Record]) -> bytes:
        data = b"".join(self.conn.send(r) for r in records)
        self.sock.sendall(data)
        return data

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def acks(self, n: int) -> list[Ack]:
        """Wait for n acks (notices are kept in self.events)."""
        got = []
        while len(got) < n:
            event = self._next()
            self.events.append(event)
            if type(event) is Ack:
                got.append(event)
            elif type(event) in (Error, ConnectionClosed):
                raise AssertionError(f"connection ended before {n} acks: {event}")
        return got

    def until(self, predicate) -> object:
        """Read events (kept in self.events) until one satisfies predicate."""
        while True:
            event = self._next()
            self.events.append(event)
            if predicate(event):
                return event
            if type(event) is ConnectionClosed:  # nothing more will come (and b"" would repeat it for ever)
                raise AssertionError(f"connection closed before the awaited event: {self.events[-5:]}")

    def until_closed(self) -> list:
        """Every event until the server closes the connection."""
        out = []
        while True:
            try:
                event = self._next()
            except (ConnectionResetError, BrokenPipeError):
                out.append(ConnectionClosed())
                return out
            out.append(event)
            if type(event) in (Error, ConnectionClosed):
                return out

    def close(self) -> None:
        self.sock.close()


@contextlib.contextmanager
def running_server(data: Path, *, store=None, **overrides):
    """A StoreServer on its own event loop in a thread; yields (server, port)."""
    settings = StoreSettings(data=data, port=0, **overrides)
    loop = asyncio.new_event_loop()
    started: dict = {}
    ready = threading.Event()

    async def main() -> None:
        server = StoreServer(settings, store=store)
        started["server"] = server
        started["port"] = (await server.start())[1]
        ready.set()
        await server.wait_stopped()
        await server.shutdown(timeout=10)

    thread = threading.Thread(target=lambda: loop.run_until_complete(main()), daemon=True)
    thread.start()
    assert ready.wait(TIMEOUT), "server did not start"
    server = started["server"]
    try:
        yield server, started["port"]
    finally:
        loop.call_soon_threadsafe(server.request_stop)
        thread.join(TIMEOUT)
        loop.close()


def filled_store(data: Path, records: list[Record]) -> Path:
    """`data` holding `records`, each acknowledged; the server stopped again."""
    with running_server(data) as (_, port):
        client = Client(port)
        client.send(records)
        assert len(client.acks(len(records))) == len(records)
        client.close()
    return data


class ServerProcess:
    """The real `storeserver` command in a subprocess."""

    def __init__(self, data: Path, *args: str, env: dict | None = None) -> None:
        self.data = data
        cmd = [sys.executable, "-m", "storeserver", "--data", str(data), "--listen", f"{HOST}:0", *args]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        self.lines: list[str] = []
        self.port = 0
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.lines.append(line)
            m = re.search(r"listening on [\d.]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if not self.port:
            self.proc.kill()
            raise AssertionError("storeserver did not start:\n" + "".join(self.lines) + self.proc.stderr.read())
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(TIMEOUT)

    def stop(self, sig: int = 15) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(TIMEOUT)
        self._reader.join(TIMEOUT)
        return code


def store_with(data: Path, records: list[Record]) -> Path:
    """A store in `data` holding `records`, each acked (committed) in order."""
    with running_server(data) as (_, port):
        client = Client(port)
        client.send(records)
        assert [a.doc_id for a in client.acks(len(records))] == [r.doc_id for r in records]
    return data
