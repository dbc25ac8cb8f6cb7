"""The filter stage without sockets: DONEs held in order per spider, links
normalised as the frontier normalises them, known URLs not asked, a
spider's end applied after its held DONEs, and drain() at a stop."""

from __future__ import annotations

import asyncio

from wreck.protocol import Done, Specific, Status
from wreck.urlserver.filterstage import FilterStage


class GatedFilter:
    """A UrlFilter stand-in whose command answers when the test says so."""

    def __init__(self) -> None:
        self.external = object()  # a command is running
        self.asked: list[list[str]] = []
        self.gate = asyncio.Event()

    async def ask(self, urls: list[str]) -> dict[str, bool]:
        self.asked.append(urls)
        await self.gate.wait()
        return {url: "/private/" not in url for url in urls}


def _done(trans_id: int, *links: str, new_url: str | None = None) -> Done:
    return Done(trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=links, new_url=new_url)


def _stage(flt, applied, known=()):
    claimed = {1: "http://a.test/dir/page", 2: "http://a.test/2", 3: "http://b.test/"}
    return FilterStage(flt, claimed_url=claimed.get, known=lambda url: url in known,
                       apply=lambda spider, done, answers: applied.append((spider, done, answers)))


async def _settle(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0)  # let the stage's task run: waits for a state, never for a time


def test_a_spiders_dones_are_applied_in_order_and_other_spiders_do_not_wait():
    async def main():
        flt, applied = GatedFilter(), []
        stage = _stage(flt, applied)
        first = _done(1, "http://a.test/x", "http://a.test/private/y")
        second = _done(2)  # no links, but behind the first of its spider
        other = _done(3)
        assert stage.wants("s1", first)
        stage.hold("s1", first)
        assert stage.wants("s1", second) and not stage.wants("s2", other)
        stage.hold("s1", second)
        stage.hold("s1", None)  # the spider left: its claims go back after its DONEs
        await _settle(lambda: flt.asked)
        assert applied == [] and len(stage) == 2 and [ids for _, ids in stage.held()] == [[1, 2]]
        flt.gate.set()
        await stage.drain()
        return applied, stage

    applied, stage = asyncio.run(main())
    assert [(s, d.trans_id if d else None) for s, d, _ in applied] == [("s1", 1), ("s1", 2), ("s1", None)]
    assert applied[0][2] == {"http://a.test/x": True, "http://a.test/private/y": False}
    assert not stage.holds("s1") and len(stage) == 0


def test_links_are_normalised_against_the_page_and_known_ones_are_not_asked():
    async def main():
        flt, applied = GatedFilter(), []
        stage = _stage(flt, applied, known={"http://a.test/known"})
        flt.gate.set()
        stage.hold("s1", _done(1, "HTTP://A.test:80/x#frag", "../up", "http://a.test/known", "mailto:x@a.test",
                               new_url="/moved"))
        await stage.drain()
        return flt.asked

    assert asyncio.run(main()) == [["http://a.test/x", "http://a.test/up", "http://a.test/moved"]]


def test_without_a_running_command_nothing_is_held():
    flt = GatedFilter()
    flt.external = None  # disabled, or never configured
    assert not _stage(flt, []).wants("s1", _done(1, "http://a.test/x"))
