"""COMMITTED (docs/protocol.txt 5.5.1): the urlserver names a spider's DONEs
once the commit holding them is durable, only to a spider that announced
caps=committed, and never a DONE it ignored; a spider that then leaves the
links it knows out of its DONEs (known=N) still reaches every page."""

from __future__ import annotations

import asyncio

from wreck.protocol import Done, Get, Specific, Status
from tests.urlserver_helpers import FakeSpider, fetched, not_found, running, settings_for, until
from tests.web import write_hosts_file

PAGES = 12


def menu_site(base: str) -> dict[str, tuple[str, ...]]:
    """Every page links to the same menu of four pages and to its next page."""
    menu = tuple(f"{base}p{i}.html" for i in range(4))
    return {f"{base}p{i}.html": menu + (f"{base}p{i + 1}.html",) for i in range(PAGES)} | {base: menu}


def responder(pages):
    def respond(a):
        if a.url.endswith("/robots.txt"):
            return not_found(a)
        return fetched(a, *pages.get(a.url, ()))

    return respond


def test_a_spider_with_caps_committed_is_told_its_durable_dones_and_leaving_links_out_loses_no_page(tmp_path):
    hosts = write_hosts_file({"a.test": "127.0.0.2"}, tmp_path / "hosts")
    settings = settings_for(tmp_path, hosts_file=str(hosts), exit_when_done=True)
    pages = menu_site("http://a.test/")

    async def main():
        async with running(settings, ["http://a.test/"]) as (server, addr):
            spider = FakeSpider(addr, respond=responder(pages), caps=("committed",), credit=1)
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 10)
            await until(lambda: spider.byes)
            await spider.close()
            return spider, server.crawl.stats, set(pages) | {u for links in pages.values() for u in links}

    spider, stats, reachable = asyncio.run(main())
    assert set(spider.urls()) - {"http://a.test/robots.txt"} == reachable  # every page, once
    assert len(spider.urls()) == len(set(spider.urls()))
    answered = [a.trans_id for _, a in spider.assignments]
    assert set(spider.committed) <= set(answered) and len(spider.committed) >= len(answered) - 1
    assert spider.sent_links.left_out > 0  # the menu went once, then was left out
    # links left out count as found: as many as an older spider's DONEs carry
    assert stats["discovered"] == sum(len(pages.get(u, ())) for u in spider.urls())


def test_a_done_the_urlserver_ignores_is_never_named_in_committed(tmp_path):
    hosts = write_hosts_file({"a.test": "127.0.0.2"}, tmp_path / "hosts")
    settings = settings_for(tmp_path, hosts_file=str(hosts))
    links = ("http://a.test/menu", "http://a.test/about")

    def respond(a):  # robots.txt and the menu pages at once; the first page held
        if a.url.endswith("/robots.txt"):
            return not_found(a)
        return None if a.url == "http://a.test/" else fetched(a)

    async def main():
        async with running(settings, ["http://a.test/"]) as (server, addr):
            spider = FakeSpider(addr, respond=respond, caps=("committed",), credit=1)
            await spider.start()
            await until(lambda: spider.silent)
            page = spider.assignments[-1][1]
            # a DONE for a claim this spider does not hold (expired, or never
            # handed out) is ignored: never named, so its links stay unknown
            spider._writer.write(spider.conn.send(Done(424242, Status.FETCHED, 200, Specific.OK, 1,
                                                       outlinks=("http://a.test/never",))))
            await until(lambda: server.crawl.stats["ignored_done"] == 1)
            spider._writer.write(spider.conn.send(fetched(page, *links)) + spider.conn.send(Get(1)))  # the held page
            await until(lambda: len(spider.assignments) == 4 and len(spider.committed) == 4)
            older = FakeSpider(addr, respond=lambda a: None, name="older", credit=1)  # no caps=
            await older.start()
            await until(lambda: older.settings)
            await spider.close()
            await older.close()
            return spider, older, page, server.crawl.frontier.lookup("http://a.test/never")

    spider, older, page, never = asyncio.run(main())
    assert sorted(spider.committed) == sorted(a.trans_id for _, a in spider.assignments)
    assert page.trans_id in spider.committed and 424242 not in spider.committed and never is None
    assert older.committed == []
