"""The dashboard's store figures: the urlserver asks the store's status
address (--store-http) and shows its last answer, never a stale one."""

from __future__ import annotations

import asyncio

from wreck.statusport import StatusPort
from wreck.urlserver.storeview import STALE_S, StoreView


def test_the_last_answer_is_shown_and_dropped_when_stale():
    figures = {"documents": 7, "bytes": 7000, "compressed_bytes": 2000, "disk_free": 10**9, "time": 0.0}
    now = [1000.0]

    async def main():
        port = StatusPort({"/status": lambda: figures})
        host, p = await port.start("127.0.0.1:0")
        view = StoreView(f"{host}:{p}", clock=lambda: now[0])
        assert view.figures is None  # nothing heard yet
        await view.poll_once()
        heard = view.figures
        port.close()
        await view.poll_once()  # the store is gone: the last answer stands, for a while
        still = view.figures
        now[0] += STALE_S + 1
        return heard, still, view.figures

    heard, still, stale = asyncio.run(main())
    assert heard == {**figures, "time": 1000.0} and still == heard
    assert stale is None


def test_a_store_that_never_answers_gives_no_figures():
    async def main():
        view = StoreView("127.0.0.1:9")  # the discard port: nothing listens
        await view.poll_once()
        return view.figures

    assert asyncio.run(main()) is None
