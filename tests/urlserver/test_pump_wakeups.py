"""Issue 16: the urlserver's pump runs when something can be due -- a
spider's event, a DNS answer, or its one timer armed for the engine's next
due time -- and never polls: a host's next URL follows its DONE at once,
and a crawl where everything waits wakes no more."""

from __future__ import annotations

import asyncio

from tests.urlserver_helpers import FakeSpider, running, settings_for, site_responder, until
from tests.web import write_hosts_file

HOSTS = {"a.test": "127.0.0.2"}


def _settings(tmp_path, **kw):
    return settings_for(tmp_path, hosts_file=str(write_hosts_file(HOSTS, tmp_path / "hosts")), **kw)


def test_at_delay_0_each_done_hands_out_the_hosts_next_url_without_a_timer(tmp_path):
    seeds = [f"http://a.test/{i}" for i in range(20)]

    async def main():
        async with running(_settings(tmp_path, delay=0.0, exit_when_done=True), seeds) as (server, addr):
            spider = FakeSpider(addr, respond=site_responder({u: () for u in seeds}), credit=1)
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 20)
            await spider.close()
            return server, spider

    server, spider = asyncio.run(main())
    assert sorted(a.url for _, a in spider.assignments) == sorted(["http://a.test/robots.txt", *seeds])
    assert server.timer_wakeups == 0  # every handout was answered to a DONE (and its GET)


def test_a_crawl_where_everything_waits_does_not_wake_until_something_is_due(tmp_path):
    seeds = ["http://a.test/1"]  # due an hour after robots.txt

    async def main():
        async with running(_settings(tmp_path, delay=3600.0), seeds) as (server, addr):
            spider = FakeSpider(addr, respond=site_responder({u: () for u in seeds}), credit=10)
            await spider.start()
            await until(lambda: server.crawl.stats["done"] == 1)  # robots.txt
            await until(lambda: server.settled)
            loop = asyncio.get_running_loop()
            armed_in = server._timer.when() - loop.time() if server._timer is not None else None
            wakeups = server.wakeups
            await asyncio.sleep(0.5)  # a polling pump (it had a 10 ms interval) would run here
            idle = server.wakeups - wakeups
            await spider.close()
            return armed_in, idle

    armed_in, idle = asyncio.run(main())
    assert idle == 0
    assert armed_in is not None and armed_in > 3000  # the one timer is for the page's turn
