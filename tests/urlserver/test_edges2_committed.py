"""A robots.txt redirected to the site's home page (tests/web/edges2.py's
robots2-home, crawled in tests/e2e/test_edges2_e2e.py): the robots.txt
fetch's DONE carries the home page's links, which the urlserver does not
record (they are a robots.txt's body, not a page's outlinks), so COMMITTED
must not name it (docs/protocol.txt 5.5.1): a spider would then leave those
links out of the page's own DONE, and the site would end at its home page."""

from __future__ import annotations

import asyncio

from wreck.protocol import Done, Specific, Status
from tests.urlserver_helpers import FakeSpider, fetched, not_found, running, settings_for, until
from tests.web import write_hosts_file

HOME = "http://a.test/"
LINKS = ("http://a.test/public", "http://a.test/about")


def test_a_robots_txt_redirected_to_the_home_page_does_not_hide_the_home_pages_links(tmp_path):
    hosts = write_hosts_file({"a.test": "127.0.0.2"}, tmp_path / "hosts")
    settings = settings_for(tmp_path, hosts_file=str(hosts), exit_when_done=True)

    def respond(a):
        if a.url.endswith("/robots.txt"):
            return Done(a.trans_id, Status.REDIRECTION, 301, Specific.REDIRECT, 1, new_url=HOME)
        if a.url == HOME:  # robots.txt's redirect target, then the page: the same HTML, the same links
            return fetched(a, *LINKS, body=b"<html><a href=/public>p</a>" if "body" in a.extra else None)
        return fetched(a) if a.url in LINKS else not_found(a)

    async def main():
        async with running(settings, [HOME]) as (server, addr):
            spider = FakeSpider(addr, respond=respond, caps=("committed",), credit=1)
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 10)
            await until(lambda: spider.byes)
            await spider.close()
            return spider

    spider = asyncio.run(main())
    assert set(LINKS) <= set(spider.urls())
