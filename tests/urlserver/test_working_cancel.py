"""A WORKING for a transaction the urlserver does not hold (unknown,
finished, or another spider's) is answered with CANCEL, as docs/protocol.txt
5.4 says it SHOULD be (issue 14: the servers stayed silent)."""

from __future__ import annotations

import asyncio

from tests.urlserver_helpers import FakeSpider, fetched, running, settings_for, until
from tests.web import write_hosts_file


def test_working_for_a_transaction_not_held_gets_cancel_and_one_held_does_not(tmp_path):
    hosts = write_hosts_file({"a.test": "127.0.0.2"}, tmp_path / "hosts")
    settings = settings_for(tmp_path, hosts_file=str(hosts))

    async def main():
        async with running(settings, ["http://a.test/"]) as (server, addr):
            # Answers robots.txt, then holds the page without a DONE.
            holder = FakeSpider(addr, respond=lambda a: fetched(a) if a.url.endswith("/robots.txt") else None,
                                name="holder")
            await holder.start()
            await until(lambda: len(holder.assignments) == 2 and holder.silent)
            robots_id, page_id = holder.assignments[0][1].trans_id, holder.assignments[1][1].trans_id
            other = FakeSpider(addr, respond=lambda a: None, name="other", credit=1)
            await other.start()
            await until(lambda: other.settings)
            holder.working(page_id, robots_id, 424242)  # held; finished; never handed out
            other.working(page_id)  # another spider's
            await until(lambda: len(holder.cancels) == 2 and len(other.cancels) == 1)
            assert server.crawl.claims.get(page_id).spider.name.startswith("holder")  # the held claim stands
            cancels = sorted(holder.cancels), other.cancels
            await holder.close()
            await other.close()
            return cancels, robots_id, page_id

    (held_by_holder, held_by_other), robots_id, page_id = asyncio.run(main())
    assert held_by_holder == sorted([robots_id, 424242])
    assert held_by_other == [page_id]
