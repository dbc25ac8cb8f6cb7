"""Failures are counted by a closed set of kinds; their free text stays in the URL records."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from prometheus_client import CollectorRegistry, generate_latest

from tests.urlserver_helpers import crawl_engine, markdown_table, not_found, serve_robots
from wreck.urlserver.dns import Resolver
from wreck.urlserver.errorkind import OWN_KINDS, ErrorKind
from wreck.urlserver.metrics import Collector
from wreck.urlserver.statusview import status
from wreck.protocol import Specific

DOC = Path(__file__).resolve().parents[2] / "docs" / "url-states.md"


def _resolver(hosts: dict[str, str]) -> Resolver:
    return Resolver(nameserver="127.0.0.1:53", hosts=hosts, allow_net=(), timeout=1.0, tries=1,
                    min_ttl=60.0, max_ttl=3600.0, negative_ttl=60.0, clock=lambda: 0.0)


def _metrics(crawl) -> str:
    server = SimpleNamespace(crawl=crawl, samples=[], spiders=[], resolver=SimpleNamespace(cache={}),
                             finish_reason=None)
    registry = CollectorRegistry()
    registry.register(Collector(server))
    return generate_latest(registry).decode()


def test_two_forbidden_addresses_give_one_label_value_and_keep_their_text(tmp_path):
    c = crawl_engine(tmp_path, allow_net=())
    for url in ("http://a.test/", "http://a.test/2", "http://b.test/"):
        c.add_seed(url)
    resolver = _resolver({"a.test": "10.1.2.3", "b.test": "10.9.9.9"})
    assert c.take("s", 0.0) is None and c.take("s", 0.0) is None
    for origin in c.dns_requests():
        c.dns_result(origin, asyncio.run(resolver.resolve(origin.name)), 0.0)
    assert c.take("s", 0.0) is None  # both origins drained
    assert c.errors_by_kind == {"FORBIDDEN_ADDRESS": 3}  # one per URL, one label
    assert "10.1.2.3" in c.lookup("http://a.test/2")["reason"]
    assert "10.9.9.9" in c.lookup("http://b.test/")["reason"]
    assert status(SimpleNamespace(crawl=c, samples=[], spiders=[], resolver=SimpleNamespace(cache={}),
                                  finish_reason=None))[
        "errors_by_kind"] == {"FORBIDDEN_ADDRESS": 3}
    metrics = _metrics(c)
    assert 'wreck_errors_total{kind="FORBIDDEN_ADDRESS"} 3.0' in metrics
    assert "10.1.2.3" not in metrics and "10.9.9.9" not in metrics
    c.close()


def test_a_failed_fetch_is_counted_by_its_specific_code(tmp_path):
    c = crawl_engine(tmp_path)
    c.add_seed("http://a.test/")
    serve_robots(c, "http://a.test")
    page = c.take("s", 0.0)
    c.done("s", not_found(page), 0.0)
    assert c.errors_by_kind == {"HTTP_ERROR": 1}
    assert c.lookup("http://a.test/")["reason"] == "HTTP_ERROR (HTTP 404)"
    c.close()


def test_every_kind_is_an_own_kind_or_a_protocol_code():
    assert {k.name for k in ErrorKind} == set(OWN_KINDS) | {s.name for s in Specific}
    assert all(k.value == k.name for k in ErrorKind)  # the label is the name


def test_the_documented_own_kinds_are_the_codes():
    assert dict(markdown_table(DOC, "Why a URL ended in ERROR")) == OWN_KINDS
