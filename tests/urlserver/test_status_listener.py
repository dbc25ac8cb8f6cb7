"""The status HTTP listener (issue 14, finding 8): refused beyond loopback
without a secret, as --listen is; capped in connections; /metrics does no
per-host work per scrape."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from types import SimpleNamespace

from prometheus_client import CollectorRegistry, generate_latest

from wreck.urlserver import http
from wreck.urlserver.http import HttpStatus
from wreck.urlserver.metrics import Collector
from wreck.urlserver.statusview import SLOW_GAUGE_S

from tests.urlserver_helpers import CountingDict, crawl_engine


def test_http_beyond_loopback_without_a_secret_is_refused_at_start(tmp_path):
    env = {"PATH": "/usr/bin:/bin"}  # no WRECK_SECRET
    proc = subprocess.run([sys.executable, "-m", "wreck.urlserver.cli", "--data", str(tmp_path / "d"),
                           "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0", "--store", "127.0.0.1:1"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "refusing to serve --http on 0.0.0.0 without a shared secret" in proc.stderr
    http.check_address("127.0.0.1:8080", b"")  # loopback needs none
    http.check_address("0.0.0.0:8080", b"a secret")  # a secret allows any address


def test_metrics_walk_no_host_per_scrape(tmp_path):
    c = crawl_engine(tmp_path)
    for i in range(2000):
        c.add_seed(f"http://h{i}.test/")
    c.frontier.origins = origins = CountingDict(c.frontier.origins)
    now = [0.0]
    server = SimpleNamespace(crawl=c, samples=[], spiders=[], resolver=SimpleNamespace(cache={}))
    registry = CollectorRegistry()
    registry.register(Collector(server, clock=lambda: now[0]))
    pages = [generate_latest(registry).decode() for _ in range(100)]
    assert "wreck_hosts_known 2000.0" in pages[-1]
    assert "wreck_robots_cache_entries 0.0" in pages[-1]
    assert origins.walks == 1  # the robots.txt gauge's one scan, not one per scrape
    now[0] += SLOW_GAUGE_S
    generate_latest(registry)
    assert origins.walks == 2
    c.close()


def test_connections_beyond_the_cap_get_503_and_the_listener_serves_again_after(tmp_path):
    c = crawl_engine(tmp_path)

    async def main():
        web = HttpStatus(SimpleNamespace(crawl=c, samples=[], spiders=[], resolver=SimpleNamespace(cache={})))
        host, port = await web.start("127.0.0.1:0")
        idle = [await asyncio.open_connection(host, port) for _ in range(http.MAX_CONNECTIONS)]
        while web.active < http.MAX_CONNECTIONS:  # every idle one accepted and counted
            await asyncio.sleep(0.01)
        reader, writer = await asyncio.open_connection(host, port)
        over = await reader.read()  # answered before it asks: nothing of it is read or kept
        for _, w in idle:
            w.close()
        while web.active:
            await asyncio.sleep(0.01)
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET /nope HTTP/1.0\r\n\r\n")
        after = await reader.read()
        await web.stop()
        return over, after

    over, after = asyncio.run(main())
    assert over.startswith(b"HTTP/1.1 503 ")
    assert after.startswith(b"HTTP/1.1 404 ")
    c.close()
