"""The urlserver's LMDB map fills mid-crawl (an in-process server with a
small map and a fake spider whose pages link to many long URLs): it stops
handing out, closes its spiders and ends with nothing committed in part;
opened again with room, it resumes from its last commit -- nothing it had
committed is handed out again -- and the crawl completes."""

from __future__ import annotations

import asyncio

from tests.urlserver_helpers import FakeSpider, fetched, not_found, settings_for
from tests.web import write_hosts_file
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.urlstate import UrlState
from wreck.urlserver.server import UrlServer

from tests.e2e_helpers import url_states as _url_states

HOSTS = {"a.test": "127.0.0.2"}
PAGES = 600  # a tree of pages, LINKS children each, with URLs padded to PAD characters
LINKS = 20
PAD = 900
SMALL_MAP = 512 * 1024  # fills after a few hundred such URLs
ROOMY_MAP = 64 * 1024 * 1024


def _url(k: int) -> str:
    return f"http://a.test/p/{k}?pad=" + "x" * PAD if k else "http://a.test/"


def _respond(a):
    if a.url.endswith("/robots.txt"):
        return not_found(a)
    k = 0 if a.url == "http://a.test/" else int(a.url.split("/p/")[1].split("?")[0])
    return fetched(a, *(_url(c) for c in range(k * LINKS + 1, k * LINKS + LINKS + 1) if c < PAGES))


async def _serve(settings, seeds=()) -> tuple[UrlServer, FakeSpider]:
    crawl = Crawl.open(settings)
    for url in seeds:
        crawl.add_seed(url)
    crawl.commit()
    server = UrlServer(settings, crawl)
    spider = FakeSpider(await server.start(), respond=_respond, credit=20)
    await spider.start()
    await asyncio.wait_for(server.finished.wait(), 30)
    await server.stop()
    await spider.close()
    return server, spider


def test_a_full_map_stops_the_urlserver_and_a_restart_with_room_completes(tmp_path):
    hosts = str(write_hosts_file(HOSTS, tmp_path / "hosts"))
    small = settings_for(tmp_path, hosts_file=hosts, exit_when_done=True, map_size=SMALL_MAP)
    server, first = asyncio.run(_serve(small, ["http://a.test/"]))
    assert server.broken is not None and "MDB_MAP_FULL" in str(server.broken)
    server.crawl.abandon()
    committed = {url for url, rec in _url_states(tmp_path / "data").items() if rec.state == UrlState.FETCHED}
    assert 0 < len(committed) < PAGES

    roomy = settings_for(tmp_path, hosts_file=hosts, exit_when_done=True, map_size=ROOMY_MAP)
    server, second = asyncio.run(_serve(roomy))
    assert server.broken is None
    server.crawl.close()
    assert not set(second.urls()) & committed, "a committed DONE was handed out again"
    states = _url_states(tmp_path / "data")
    assert {url for url, rec in states.items() if rec.state == UrlState.FETCHED} == {_url(k) for k in range(PAGES)}
