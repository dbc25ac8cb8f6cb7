"""A host with only an IPv6 address (AAAA, no A record) is crawled over IPv6
when --allow-net admits it, and never contacted when nothing admits it."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from wreck.storeserver.store import ReadStore
from tests.web import DnsResponder

PAGES = {"/": b'<a href="/a">a</a> <a href="/b">b</a>', "/a": b'<a href="/">home</a>', "/b": b"leaf"}


class _V6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True


def _serve_v6():
    seen: list[tuple[str, str]] = []  # (client address, path)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append((self.client_address[0], self.path))
            body = PAGES.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args):
            pass

    server = _V6Server(("::1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


class _Dns:
    """The test web's DNS responder on its own loop thread."""

    def __init__(self, table):
        self.responder = DnsResponder(table)
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(self.responder.start(), self.loop).result(10)

    def close(self):
        asyncio.run_coroutine_threadsafe(self.responder.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)


@pytest.fixture
def v6_web():
    try:
        server, seen = _serve_v6()
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    dns = _Dns({"v6.wreck.test": "::1"})
    yield f"http://v6.wreck.test:{server.server_address[1]}/", seen, dns
    dns.close()
    server.shutdown()


def _crawl(tmp_path, seed, dns, *allow):
    ip, port = dns.responder.address
    cmd = [sys.executable, "-m", "wreck.local.cli", seed, "--data", str(tmp_path / "crawl"),
           "--dns", f"{ip}:{port}", "--delay", "0", "--procs", "1", "--concurrency", "4",
           *[arg for net in allow for arg in ("--allow-net", net)]]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_an_ipv6_only_host_is_crawled_over_ipv6(tmp_path, v6_web):
    seed, seen, dns = v6_web
    run = _crawl(tmp_path, seed, dns, "::1/128")
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(path for _, path in seen) == ["/", "/a", "/b", "/robots.txt"]
    assert {client for client, _ in seen} == {"::1"}
    reader = ReadStore(tmp_path / "crawl")
    stored = sorted(m.url for m, _ in reader.iter_docs(with_documents=False))
    reader.close()
    assert stored == sorted(seed + p for p in ("", "a", "b", "robots.txt"))
    asked = {(q.name, q.qtype) for q in dns.responder.queries()}
    assert ("v6.wreck.test", "AAAA") in asked


def test_an_ipv6_loopback_host_is_never_contacted_unless_admitted(tmp_path, v6_web):
    seed, seen, dns = v6_web
    run = _crawl(tmp_path, seed, dns, "127.0.0.0/8")
    # nothing fetched because of the address policy: exit 3 with the hint (issue 13)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "--allow-net" in run.stderr
    assert seen == []
    state = subprocess.run([sys.executable, "-c", (
        "import sys; from wreck.urlserver.crawl import Crawl; from wreck.urlserver.settings import Settings;"
        "c = Crawl.open(Settings(data=sys.argv[1], sync=False)); print(c.frontier.lookup(sys.argv[2])); c.close()"),
        str(tmp_path / "crawl" / "frontier"), seed], capture_output=True, text=True, check=True)  # fmt: skip
    assert "'state': 'ERROR'" in state.stdout and "forbidden address ::1 (loopback)" in state.stdout
