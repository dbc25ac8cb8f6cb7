"""The urlserver with scripted fake spiders over loopback TCP."""

from __future__ import annotations

import asyncio
import time

from wreck.protocol import Done, Specific, Status
from tests.urlserver_helpers import (
    FakeSpider, crawl_once, fetched, running, settings_for, site_responder, until,
)
from tests.web import write_hosts_file

HOSTS = {"a.test": "127.0.0.2", "b.test": "127.0.0.3", "c.test": "127.0.0.3", "bad.test": "10.1.2.3"}


def _settings(tmp_path, **kw):
    hosts = write_hosts_file(HOSTS, tmp_path / "hosts")
    return settings_for(tmp_path, hosts_file=str(hosts), **kw)


def test_robots_first_then_pages_and_exit_when_done(tmp_path):
    pages = {"http://a.test/": ("http://a.test/1", "http://a.test/2", "http://a.test/private/x"),
             "http://a.test/1": ("http://a.test/2",), "http://a.test/2": ()}
    robots = {"http://a.test/robots.txt": b"User-agent: *\nDisallow: /private\n"}

    spider, states = crawl_once(_settings(tmp_path, exit_when_done=True), ["http://a.test/"],
                                site_responder(pages, robots), ["http://a.test/private/x", "http://a.test/1"])
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


def test_a_disallowed_url_is_counted_in_status_not_logged_one_line_each(tmp_path, caplog):
    # issue 16: one INFO line per disallowed URL (and per robots.txt handout)
    # was most of a large crawl's log; the count is in /status, the lines at -v
    import logging

    pages = {"http://a.test/": tuple(f"http://a.test/private/{i}" for i in range(5))}
    robots = {"http://a.test/robots.txt": b"User-agent: *\nDisallow: /private\n"}
    caplog.set_level(logging.INFO)
    spider, states = crawl_once(_settings(tmp_path, exit_when_done=True), ["http://a.test/"],
                                site_responder(pages, robots), ["http://a.test/private/0"])
    assert states["http://a.test/private/0"]["state"] == "DISALLOWED"
    assert "event=robots origin=http://a.test" in caplog.text  # how robots.txt ended, once per origin
    assert "event=disallowed" not in caplog.text and "event=robots_fetch" not in caplog.text
    finished = [r.getMessage() for r in caplog.records if "event=crawl_finished" in r.getMessage()]
    assert "'DISALLOWED': 5" in finished[-1]


def test_host_and_ip_delays_and_no_double_handout(tmp_path):
    seeds = [f"http://{h}/{i}" for h in ("a.test", "b.test", "c.test") for i in range(4)]
    delay, ip_delay = 0.15, 0.05

    async def main():
        settings = _settings(tmp_path, delay=delay, ip_delay=ip_delay, exit_when_done=True)
        async with running(settings, seeds) as (server, addr):
            log = []  # the server's own handout times
            server.crawl.on_handout = lambda now, a: log.append((now, a))
            spiders = [FakeSpider(addr, respond=site_responder({}), name=f"s{i}", credit=5) for i in range(2)]
            for s in spiders:
                await s.start()
            await asyncio.wait_for(server.finished.wait(), 20)
            for s in spiders:
                await s.close()
            assert sorted(a.trans_id for s in spiders for _, a in s.assignments) == [a.trans_id for _, a in log]
            return log

    handouts = sorted(asyncio.run(main()), key=lambda x: x[0])
    by_host: dict[str, list[float]] = {}
    by_ip: dict[str, list[float]] = {}
    for t, a in handouts:
        by_host.setdefault(a.host_name, []).append(t)
        by_ip.setdefault(a.host_ip, []).append(t)
    for times in by_host.values():
        assert all(b - a >= delay - 1e-9 for a, b in zip(times, times[1:]))
    for times in by_ip.values():
        assert all(b - a >= ip_delay - 1e-9 for a, b in zip(times, times[1:]))
    urls = [a.url for _, a in handouts]
    assert len(urls) == len(set(urls)) == len(seeds) + 3  # each page once, plus three robots.txt


def test_forbidden_address_never_handed_out(tmp_path):
    respond = site_responder({"http://a.test/": ("http://bad.test/other",)})
    spider, states = crawl_once(_settings(tmp_path, exit_when_done=True), ["http://bad.test/", "http://a.test/"],
                                respond, ["http://bad.test/"])
    rec = states["http://bad.test/"]
    assert all(a.host_name != "bad.test" for _, a in spider.assignments)
    assert rec["state"] == "ERROR" and "forbidden address 10.1.2.3" in rec["reason"]


def test_expired_claim_requeued_with_same_doc_id(tmp_path):
    answered = set()

    def respond(a):  # hang on the page the first time, answer later
        if a.url.endswith("/robots.txt"):
            return site_responder({})(a)
        if a.url not in answered:
            answered.add(a.url)
            return None
        return fetched(a)

    spider, _ = crawl_once(_settings(tmp_path, timeout_update=0.3, exit_when_done=True), ["http://a.test/"], respond)
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
    """Each WORKING moves its claim's deadline to Timeout_Update after the
    urlserver read it, so a spider that keeps reporting keeps its claim. Read
    from the claim table rather than waited for: a Timeout_Update no slow
    machine reaches, and deadlines compared with the clock the urlserver uses."""
    async def main():
        settings = _settings(tmp_path, timeout_update=60.0)
        async with running(settings, ["http://a.test/"]) as (server, addr):
            spider = FakeSpider(addr, respond=lambda a: site_responder({})(a) if "robots" in a.url else None)
            await spider.start()
            await until(lambda: len(spider.assignments) == 2)
            page = spider.assignments[1][1]
            claim = server.crawl.claims.get(page.trans_id)
            for _ in range(5):
                sent = time.time()  # the urlserver's clock
                spider.working(page.trans_id)
                await until(lambda: claim.deadline >= sent + settings.timeout_update)
            assert server.crawl.claims.get(page.trans_id) is claim  # still held, by the same claim
            assert spider.cancels == [] and len(spider.assignments) == 2
            await spider.close()

    asyncio.run(main())


def test_dns_responder_cache_and_nxdomain(tmp_path):
    from tests.web import DnsResponder

    async def main():
        dns = DnsResponder({"a.test": "127.0.0.2"}, ttl=60)
        await dns.start()
        ip, port = dns.address
        settings = settings_for(tmp_path, dns=f"{ip}:{port}", exit_when_done=True, dns_timeout=1.0)
        pages = {"http://a.test/": tuple(f"http://a.test/{i}" for i in range(5))}
        async with running(settings, ["http://a.test/", "http://nowhere.test/"]) as (server, addr):
            spider = FakeSpider(addr, respond=site_responder(pages))
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 10)
            await spider.close()
            rec = server.crawl.frontier.lookup("http://nowhere.test/")
        await dns.stop()
        return spider, rec, dns.queries()

    spider, rec, queries = asyncio.run(main())
    assert rec["state"] == "ERROR" and rec["reason"] == "dns: NXDOMAIN"
    assert len(spider.assignments) == 7 and {a.host_ip for _, a in spider.assignments} == {"127.0.0.2"}
    assert [q.name for q in queries if q.name == "a.test"] == ["a.test"]  # cached by TTL


def test_robots_unreachable_blocks_the_host_until_a_retry(tmp_path):
    calls = []

    def respond(a):
        if a.url.endswith("/robots.txt"):
            calls.append(a.url)
            if len(calls) == 1:
                return Done(a.trans_id, Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, 1)
            return fetched(a, body=b"User-agent: *\nAllow: /\n")
        return fetched(a)

    spider, _ = crawl_once(_settings(tmp_path, robots_retry=0.2, exit_when_done=True), ["http://a.test/"], respond)
    urls = spider.urls()
    assert urls == ["http://a.test/robots.txt", "http://a.test/robots.txt", "http://a.test/"]
    assert spider.assignments[1][0] - spider.assignments[0][0] >= 0.2


def test_robots_redirect_to_another_host(tmp_path):
    def respond(a):
        if a.url == "http://a.test/robots.txt":
            return Done(a.trans_id, Status.REDIRECTION, 301, Specific.REDIRECT, 1,
                        new_url="http://b.test/robots.txt")
        if a.url == "http://b.test/robots.txt":
            return fetched(a, body=b"User-agent: *\nDisallow: /no\n")
        return fetched(a)

    spider, states = crawl_once(_settings(tmp_path, exit_when_done=True), ["http://a.test/", "http://a.test/no"],
                                respond, ["http://a.test/no"])
    rec = states["http://a.test/no"]
    assert [(a.host_name, a.url) for _, a in spider.assignments] == [
        ("a.test", "http://a.test/robots.txt"), ("b.test", "http://b.test/robots.txt"),
        ("a.test", "http://a.test/")]
    assert rec["state"] == "DISALLOWED"


def test_status_metrics_and_dashboard(tmp_path):
    import json

    from wreck.urlserver.http import HttpStatus

    async def main():
        async with running(_settings(tmp_path), ["http://a.test/", "http://a.test/x"]) as (server, addr):
            spider = FakeSpider(addr, respond=lambda a: None if "/x" in a.url else site_responder({})(a))
            await spider.start()
            await until(lambda: len(spider.assignments) >= 3)
            web = HttpStatus(server)
            host, port = await web.start("127.0.0.1:0")
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(b"GET /status HTTP/1.0\r\n\r\n")
            raw = await reader.read()
            writer.close()
            pages = {path: web.respond(path) for path in ("/metrics", "/", "/url?u=http://a.test/x", "/nope")}
            await web.stop()
            await spider.close()
            return raw, pages

    raw, pages = asyncio.run(main())
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    status = json.loads(body)
    assert status["urls"]["IN_FLIGHT"] == 1 and status["in_flight_by_spider"] == {"fake#1": 1}
    assert status["robots_cache"] == 1 and status["dns_cache"] == 1
    assert b'wreck_urls{state="in_flight"} 1.0' in pages["/metrics"][2]
    assert b'fetch("/status"' in pages["/"][2]  # the page refreshes itself from /status
    assert json.loads(pages["/url?u=http://a.test/x"][2])["state"] == "IN_FLIGHT"
    assert pages["/nope"][0] == 404


class _Holder(FakeSpider):
    """Answers `page` with its links and then asks for no more work."""

    def __init__(self, address, *, page: str, links: tuple[str, ...], **kw) -> None:
        super().__init__(address, respond=site_responder({page: links}), credit=1, **kw)
        self.page = page

    def _answer(self, a) -> None:
        if a.url != self.page:
            return super()._answer(a)
        self._writer.write(self.conn.send(self.respond(a)))  # no GET: this spider takes nothing more


def test_a_stalled_url_filter_holds_only_the_done_it_judges_and_other_spiders_keep_working(tmp_path):
    gate = tmp_path / "gate"
    # Stalls on its first batch until the test opens the gate, then drops /private/ links.
    command = f"while [ ! -e {gate} ]; do sleep 0.01; done; exec grep --line-buffered -v /private/"
    links = ("http://a.test/ok", "http://a.test/private/no", "/relative/ok", "http://c.test/other")
    others = [f"http://b.test/{i}" for i in range(5)]

    async def main():
        settings = _settings(tmp_path, url_filter_cmd=command, url_filter_timeout=60.0, timeout_update=0.5)
        async with running(settings, ["http://a.test/"]) as (server, addr):
            first = _Holder(addr, page="http://a.test/", links=links, name="first")
            await first.start()
            await until(lambda: len(server.filter_stage) == 1)  # its DONE waits for the command
            held = server.crawl.claims.get(first.assignments[-1][1].trans_id)
            deadline = held.deadline
            for url in others:  # new work, seeded while the command stalls
                server.crawl.add_seed(url)
            server.request_pump()
            second = FakeSpider(addr, respond=site_responder({}), name="second")
            await second.start()
            lookup = server.crawl.frontier.lookup
            await until(lambda: all(lookup(u)["state"] == "ERROR" for u in others))  # all answered (404)
            await until(lambda: held.deadline > deadline)  # past its deadline, kept alive, not expired
            during = (len(server.filter_stage), {u: lookup(u) for u in links[:2]}, list(first.cancels))
            gate.touch()
            await until(lambda: lookup("http://a.test/ok") is not None and not server.filter_stage.holds(first))
            await until(lambda: any(a.url == "http://a.test/ok" for _, a in second.assignments))
            after = {u: lookup(u) for u in ("http://a.test/ok", "http://a.test/private/no",
                                            "http://a.test/relative/ok", "http://c.test/other", "http://a.test/")}
            handed = [a.url for s in (first, second) for _, a in s.assignments]
            await first.close()
            await second.close()
            return second, during, after, handed

    second, (held_during, links_during, cancels), after, handed = asyncio.run(main())
    assert [a.url for _, a in second.assignments][:6] == ["http://b.test/robots.txt", *others]
    assert held_during == 1 and links_during == {"http://a.test/ok": None, "http://a.test/private/no": None}
    assert cancels == []
    assert after["http://a.test/"]["state"] == "FETCHED"
    assert after["http://a.test/private/no"]["state"] == "FILTERED"
    assert after["http://a.test/private/no"]["reason"] == "url-filter-cmd"
    assert after["http://a.test/relative/ok"]["state"] != "FILTERED"  # resolved against the page, then asked
    assert after["http://c.test/other"]["reason"] != "url-filter-cmd"  # out of scope: scope rules still come first
    assert "http://a.test/private/no" not in handed and handed.count("http://a.test/") == 1


def test_a_dead_url_filter_is_disabled_and_the_done_applied_unfiltered(tmp_path, caplog):
    links = ("http://a.test/1", "http://a.test/private/2")
    respond = site_responder({"http://a.test/": links})
    spider, states = crawl_once(_settings(tmp_path, url_filter_cmd="exit 3", exit_when_done=True),
                                ["http://a.test/"], respond, links)
    assert set(links) <= set(spider.urls())  # both admitted and handed out (the test site answers 404)
    assert {states[u]["state"] for u in links} == {"ERROR"}
    assert "event=url_filter_cmd_disabled" in caplog.text


def test_at_stop_a_held_done_is_applied_once_the_filter_answers(tmp_path):
    from wreck.urlserver.crawl import Crawl
    from wreck.urlserver.server import UrlServer

    gate = tmp_path / "gate"
    command = f"while [ ! -e {gate} ]; do sleep 0.01; done; exec grep --line-buffered -v /private/"
    links = ("http://a.test/ok", "http://a.test/private/no")

    async def main():
        settings = _settings(tmp_path, url_filter_cmd=command, url_filter_timeout=60.0)
        crawl = Crawl.open(settings)
        crawl.add_seed("http://a.test/")
        server = UrlServer(settings, crawl)
        addr = await server.start()
        first = _Holder(addr, page="http://a.test/", links=links, name="first")
        await first.start()
        await until(lambda: len(server.filter_stage) == 1)
        stopping = asyncio.ensure_future(server.stop())
        await until(lambda: server.listener.stopping)
        waited = not stopping.done()  # the stop waits for the command's answer
        gate.touch()
        await stopping
        states = {u: crawl.frontier.lookup(u) for u in ("http://a.test/", *links)}
        await first.close()
        crawl.close()
        return waited, states

    waited, states = asyncio.run(main())
    assert waited
    assert states["http://a.test/"]["state"] == "FETCHED"  # applied, not requeued with its spider's claims
    assert states["http://a.test/ok"]["state"] == "PENDING"
    assert states["http://a.test/private/no"]["reason"] == "url-filter-cmd"
