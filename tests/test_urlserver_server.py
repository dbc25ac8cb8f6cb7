"""The urlserver with scripted fake spiders over loopback TCP."""

from __future__ import annotations

import asyncio

from tests.urlserver_helpers import FakeSpider, fetched, running, settings_for, site_responder, until
from tests.web import write_hosts_file

HOSTS = {"a.test": "127.0.0.2", "b.test": "127.0.0.3", "c.test": "127.0.0.3", "bad.test": "10.1.2.3"}


def _settings(tmp_path, **kw):
    hosts = write_hosts_file(HOSTS, tmp_path / "hosts")
    return settings_for(tmp_path, hosts_file=str(hosts), **kw)


def test_robots_first_then_pages_and_exit_when_done(tmp_path):
    pages = {"http://a.test/": ("http://a.test/1", "http://a.test/2", "http://a.test/private/x"),
             "http://a.test/1": ("http://a.test/2",), "http://a.test/2": ()}
    robots = {"http://a.test/robots.txt": b"User-agent: *\nDisallow: /private\n"}

    async def main():
        async with running(_settings(tmp_path, exit_when_done=True), ["http://a.test/"]) as (server, addr):
            spider = FakeSpider(addr, respond=site_responder(pages, robots))
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 10)
            await until(lambda: spider.byes)
            await spider.close()
            return spider, {u: server.crawl.frontier.lookup(u) for u in ("http://a.test/private/x", "http://a.test/1")}

    spider, states = asyncio.run(main())
    urls = spider.urls()
    assert urls[0] == "http://a.test/robots.txt"
    assert spider.assignments[0][1].extra == {"body": "512000"}
    assert sorted(urls[1:]) == ["http://a.test/", "http://a.test/1", "http://a.test/2"]
    assert spider.byes == ["done"]
    assert states["http://a.test/private/x"]["state"] == "DISALLOWED"
    assert states["http://a.test/1"]["state"] == "FETCHED"
    # every handout names the address of the hosts file
    assert {a.host_ip for _, a in spider.assignments} == {"127.0.0.2"}
    assert spider.settings["allow_net"] == "127.0.0.0/8"


def test_host_and_ip_delays_and_no_double_handout(tmp_path):
    seeds = [f"http://{h}/{i}" for h in ("a.test", "b.test", "c.test") for i in range(4)]
    delay, ip_delay = 0.15, 0.05

    async def main():
        settings = _settings(tmp_path, delay=delay, ip_delay=ip_delay, exit_when_done=True)
        async with running(settings, seeds) as (server, addr):
            spiders = [FakeSpider(addr, respond=site_responder({}), name=f"s{i}", credit=5) for i in range(2)]
            for s in spiders:
                await s.start()
            await asyncio.wait_for(server.finished.wait(), 20)
            for s in spiders:
                await s.close()
            return [x for s in spiders for x in s.assignments]

    handouts = sorted(asyncio.run(main()), key=lambda x: x[0])
    by_host: dict[str, list[float]] = {}
    by_ip: dict[str, list[float]] = {}
    for t, a in handouts:
        by_host.setdefault(a.host_name, []).append(t)
        by_ip.setdefault(a.host_ip, []).append(t)
    for times in by_host.values():
        assert all(b - a >= delay * 0.99 for a, b in zip(times, times[1:]))
    for times in by_ip.values():
        assert all(b - a >= ip_delay * 0.99 for a, b in zip(times, times[1:]))
    urls = [a.url for _, a in handouts]
    assert len(urls) == len(set(urls)) == len(seeds) + 3  # each page once, plus three robots.txt


def test_forbidden_address_never_handed_out(tmp_path):
    async def main():
        settings = _settings(tmp_path, exit_when_done=True)
        async with running(settings, ["http://bad.test/", "http://a.test/"]) as (server, addr):
            spider = FakeSpider(addr, respond=site_responder({"http://a.test/": ("http://bad.test/other",)}))
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 10)
            await spider.close()
            return spider, server.crawl.frontier.lookup("http://bad.test/")

    spider, rec = asyncio.run(main())
    assert all(a.host_name != "bad.test" for _, a in spider.assignments)
    assert rec["state"] == "ERROR" and "forbidden address 10.1.2.3" in rec["reason"]


def test_expired_claim_requeued_with_same_doc_id(tmp_path):
    async def main():
        settings = _settings(tmp_path, timeout_update=0.3, exit_when_done=True)
        async with running(settings, ["http://a.test/"]) as (server, addr):
            answered = set()

            def respond(a):  # hang on the page the first time, answer later
                if a.url.endswith("/robots.txt"):
                    return site_responder({})(a)
                if a.url not in answered:
                    answered.add(a.url)
                    return None
                return fetched(a)

            spider = FakeSpider(addr, respond=respond)
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 10)
            await spider.close()
            return spider

    spider = asyncio.run(main())
    pages = [a for _, a in spider.assignments if a.url == "http://a.test/"]
    assert len(pages) == 2
    assert pages[0].doc_id == pages[1].doc_id and pages[0].trans_id != pages[1].trans_id
    assert spider.cancels == [pages[0].trans_id]


def test_spider_disconnect_requeues_its_claims(tmp_path):
    async def main():
        settings = _settings(tmp_path, exit_when_done=True)
        async with running(settings, ["http://a.test/"]) as (server, addr):
            quiet = FakeSpider(addr, respond=lambda a: site_responder({})(a) if "robots" in a.url else None)
            await quiet.start()
            await until(lambda: any(a.url == "http://a.test/" for _, a in quiet.assignments))
            await quiet.close()
            good = FakeSpider(addr, respond=site_responder({"http://a.test/": ()}))
            await good.start()
            await asyncio.wait_for(server.finished.wait(), 10)
            await good.close()
            return quiet, good, server.crawl.frontier.lookup("http://a.test/")

    quiet, good, rec = asyncio.run(main())
    first = [a for _, a in quiet.assignments if a.url == "http://a.test/"][0]
    again = [a for _, a in good.assignments if a.url == "http://a.test/"][0]
    assert again.doc_id == first.doc_id
    assert rec["state"] == "FETCHED"


def test_working_keeps_a_claim(tmp_path):
    async def main():
        settings = _settings(tmp_path, timeout_update=0.3)
        async with running(settings, ["http://a.test/"]) as (server, addr):
            spider = FakeSpider(addr, respond=lambda a: site_responder({})(a) if "robots" in a.url else None)
            await spider.start()
            await until(lambda: len(spider.assignments) == 2)
            page = spider.assignments[1][1]
            for _ in range(5):
                await asyncio.sleep(0.1)
                spider.working(page.trans_id)
            assert spider.cancels == [] and len(spider.assignments) == 2
            await spider.close()

    asyncio.run(main())
