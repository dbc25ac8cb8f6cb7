# Bad peers against the real daemons: thousands of connections, each one a
# kind of misbehaviour (garbage, a mutated handshake, a valid handshake then
# mutated messages, a handshake line that never ends, a record header that
# announces 4 GiB, a peer that connects and leaves), while a well-behaved
# spider and store client stay connected alongside. Reports each server's
# resident memory before and after, and whether the good clients were ever
# refused. tests/test_bad_peers.py runs a short version; `make fuzz` a long one.
"""Bad-peer soak: `python -m tests.fuzz.soak [--connections N]`."""

from __future__ import annotations

import argparse
import os
import random
import socket
import tempfile
from pathlib import Path

from wreck.protocol import Record, Role, Specific, StoreConnection, ControlConnection, http_enum
from wreck.protocol.record import RECORD_HEADER

from ..daemon_helpers import HOST, IO_TIMEOUT, ControlClient, Daemon, exchange, raw_exchange, read_events
from ..store_helpers import Client as StoreClient
from . import control_server, store_records
from .driver import mutate

SECRET = b"soak-secret-0123456789abcdef"
JUNK_AFTER = 8 << 20  # bytes sent after an oversized announcement: RSS would show them if kept
SOAK_JUNK = 1 << 20  # the same in the soak, where many connections send it
KINDS = ("garbage", "mutated-auth", "mutated-open", "endless-line", "huge-record", "silent")


def start_daemons(tmp: Path, dns: str, *extra_url: str) -> tuple[Daemon, Daemon]:
    env = {"WRECK_SECRET": SECRET.decode()}
    store = Daemon("wreck.storeserver.cli", ["--data", str(tmp / "store"), "--listen", f"{HOST}:0",
                                       "--max-doc-len", "65536"], tmp / "store.log", env=env)
    url = Daemon("wreck.urlserver.cli", ["--data", str(tmp / "url"), "--listen", f"{HOST}:0", "--http", "off",
                                   "--store", f"{HOST}:{store.port}", "--dns", dns, "--allow-net", "127.0.0.0/8",
                                   "-v", *extra_url], tmp / "url.log", env=env)
    return url, store


def authenticated(port: int, kind: type) -> tuple[socket.socket, object]:
    """A connection through the handshake with the right secret."""
    sock = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
    conn = kind(Role.CLIENT, secret=SECRET, nonce=os.urandom(32), name="mutant")
    read_events(conn, sock, until=lambda e: True)
    sock.sendall(conn.authenticate())
    read_events(conn, sock, until=lambda e: type(e).__name__ == "Ready")
    return sock, conn


def bad_connection(port: int, service: str, kind: str, rng: random.Random) -> bytes:
    """One misbehaving connection of `kind`; what the server said."""
    control = service == "urlserver"
    seeds = [s[1:] for s in (control_server.SEEDS if control else store_records.SEEDS)]
    if kind == "garbage":
        return raw_exchange(port, rng.randbytes(rng.randint(0, 3000)))
    if kind == "mutated-auth":
        conn = (ControlConnection if control else StoreConnection)(Role.CLIENT, secret=SECRET, nonce=os.urandom(32))
        conn.receive_data(f"WRECK/1 HELLO {service} {os.urandom(32).hex()}\n".encode())
        conn.next_event()
        return raw_exchange(port, mutate(conn.authenticate(), seeds, rng))
    if kind == "mutated-open":
        sock, _ = authenticated(port, ControlConnection if control else StoreConnection)
        with sock:
            return _finish(sock, mutate(rng.choice(seeds), seeds, rng))
    if kind == "endless-line":  # a handshake line that never ends: refused after 512 bytes
        return raw_exchange(port, b"WRECK/1 AUTH spider " + b"x" * SOAK_JUNK)
    if kind == "huge-record":  # a record header announcing 4 GiB, before authentication
        header = RECORD_HEADER.pack(1, 1, 0, http_enum(200), 0, 1, 8, 0, 0xFFFFFFFF)
        return raw_exchange(port, header + b"\0" * SOAK_JUNK)
    return raw_exchange(port, b"")  # connects and leaves


def _finish(sock: socket.socket, data: bytes) -> bytes:
    """Send `data`, shut our side, read until the server closes; what it said."""
    return exchange(sock, data)


def good_clients(url_port: int, store_port: int) -> tuple[ControlClient, StoreClient]:
    return ControlClient(url_port, secret=SECRET), StoreClient(store_port, secret=SECRET, name="good-store-client")


def check_good(control: ControlClient, store: StoreClient, doc_id: int) -> None:
    """Both good clients still get answers: an IDLE hint, an ack."""
    answer = control.ping()
    assert type(answer).__name__ in ("Idle", "Assignment"), answer
    record = Record(doc_id, True, Specific.OK, http_enum(200), 1, f"http://127.0.0.1/good/{doc_id}", None,
                    b"HTTP/1.1 200 OK\r\n\r\ngood")
    store.send([record])
    ack = store.acks(1)[0]
    assert ack.doc_id == doc_id, ack


def soak(url: Daemon, store: Daemon, connections: int, *, seed: int = 0, kinds=KINDS) -> dict:
    """`connections` bad connections spread over both servers; RSS figures, KiB."""
    rng = random.Random(seed)
    control, store_client = good_clients(url.port, store.port)
    warm = max(1, connections // 10)  # allocator pools and caches settle first
    before: dict[str, int] = {}
    for i in range(connections + warm):
        if i == warm:
            before = {"urlserver": url.rss_kib(), "storeserver": store.rss_kib()}
        service = "urlserver" if i % 2 else "storeserver"
        bad_connection(url.port if i % 2 else store.port, service, rng.choice(kinds), rng)
        if i % 100 == 0:
            check_good(control, store_client, 1_000_000 + i)
    check_good(control, store_client, 2_000_000)
    after = {"urlserver": url.rss_kib(), "storeserver": store.rss_kib()}
    control.close()
    store_client.close()
    return {"before": before, "after": after, "connections": connections}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--connections", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from ..web import RunningWeb, SiteSpec

    with tempfile.TemporaryDirectory() as tmp, RunningWeb(SiteSpec(hosts=1, pages_per_host=1)) as web:
        url, store = start_daemons(Path(tmp), "%s:%d" % web.dns_address)
        try:
            figures = soak(url, store, args.connections, seed=args.seed)
            alive = url.alive() and store.alive()
        finally:
            url.stop()
            store.stop()
        tracebacks = sum(d.text().count("Traceback") for d in (url, store))
    for name in ("urlserver", "storeserver"):
        b, a = figures["before"][name], figures["after"][name]
        print(f"{name}: RSS {b / 1024:.1f} MiB -> {a / 1024:.1f} MiB ({(a - b) / 1024:+.1f} MiB) "
              f"over {args.connections // 2} bad connections")
    print(f"both servers up throughout: {alive}; good clients answered every check; tracebacks logged: {tracebacks}")
    raise SystemExit(0 if alive and not tracebacks else 1)


if __name__ == "__main__":
    main()
