"""A spider of a partitioned crawl (docs/partitions.md): told the partitions
in the handshake, it connects to each, and its concurrency is split evenly
among the partitions connected at the moment; a partition that goes down
gives its share to the others."""

from __future__ import annotations

import asyncio

from wreck.protocol.settings import CrawlSettings
from wreck.spider.worker import Worker, WorkerOptions


class _Session:
    def __init__(self) -> None:
        self.window = None

    def resize(self, concurrency: int) -> None:
        self.window = concurrency


def test_the_concurrency_is_split_among_the_partitions_up_and_a_down_ones_share_goes_to_the_others():
    async def main():
        worker = Worker(WorkerOptions(connect="127.0.0.1:7001", concurrency=30))
        a, b, c = _Session(), _Session(), _Session()
        worker.sessions = {"127.0.0.1:7001": a, "127.0.0.1:7011": b, "127.0.0.1:7021": c}
        worker._share()
        assert (a.window, b.window, c.window) == (10, 10, 10)
        del worker.sessions["127.0.0.1:7011"]  # partition 1 went down
        worker._share()
        assert (a.window, c.window) == (15, 15)

    asyncio.run(main())


def test_the_handshake_names_the_partitions_and_the_spider_dials_each_other_one_once():
    async def main():
        worker = Worker(WorkerOptions(connect="127.0.0.1:7001"))
        dialled = []

        async def connect_loop(address):
            dialled.append(address)
            return 0

        worker._connect_loop = connect_loop
        settings = CrawlSettings.from_wire({
            "store": "127.0.0.1:7002", "timeout_update_ms": "30000", "timeout_req_ms": "60000",
            "max_doc_size": "1000", "user_agent": "x", "partitions": "127.0.0.1:7001,127.0.0.1:7011",
            "partition": "0"})
        assert settings.partitions == ("127.0.0.1:7001", "127.0.0.1:7011") and settings.partition == 0
        worker._partitions(settings)
        worker._partitions(settings)  # a reconnect to partition 0 dials nothing new
        await asyncio.gather(*worker._links.values())
        assert dialled == ["127.0.0.1:7011"]

    asyncio.run(main())
