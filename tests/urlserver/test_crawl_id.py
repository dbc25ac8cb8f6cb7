"""A crawl's identity (docs/protocol.txt 5.1): drawn once when the crawl's
state is made, kept in its LMDB, announced to every spider in the control
handshake's SET lines and shown in /status; another data directory is
another crawl."""

from __future__ import annotations

import asyncio

from wreck.protocol.handshake import is_crawl_id
from wreck.protocol.settings import CrawlSettings
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.http import status

from tests.urlserver_helpers import FakeSpider, running, settings_for, until


def _announced(settings) -> tuple[str, str]:
    """(the crawl id a spider hears in the handshake, the one /status shows)."""

    async def main():
        async with running(settings, ["http://a.test/"]) as (server, addr):
            spider = FakeSpider(addr, respond=lambda a: None)
            await spider.start()
            await until(lambda: spider.settings)
            await spider.close()
            return CrawlSettings.from_wire(spider.settings).crawl_id, status(server)["crawl_id"]

    return asyncio.run(main())


def test_every_spider_hears_the_crawl_id_the_urlserver_keeps_across_restarts(tmp_path):
    settings = settings_for(tmp_path)
    first, shown = _announced(settings)
    assert is_crawl_id(first) and shown == first
    again, _ = _announced(settings)  # a restart on the same --data is the same crawl
    assert again == first


def test_another_data_directory_is_another_crawl(tmp_path):
    one = Crawl.open(settings_for(tmp_path / "one"))
    two = Crawl.open(settings_for(tmp_path / "two"))
    try:
        assert one.crawl_id != two.crawl_id
    finally:
        one.close()
        two.close()
