# The external URL filter as a stage in front of the engine. A DONE that
# carries outlinks or a redirect target, while --url-filter-cmd runs, is
# held here: the stage normalises its links as the frontier will
# (wreck/urlnorm.py, against the claimed URL), skips those the crawl
# already knows, asks the command about the rest (UrlFilter.ask, awaited:
# the event loop serves every other spider, DNS answer and /status request
# meanwhile), and only then applies the DONE with the answers in hand.
#
# Order: the DONEs of one spider are applied in the order they came. Once a
# spider has a DONE held, its later DONEs (with links or not) and its end
# (apply(spider, None): its claims go back) queue behind it. Spiders do not
# wait for each other, though their batches take turns in the one command.
# A held DONE's claim is still in flight for the engine: the server extends
# it (held()) so it cannot expire while its answer is awaited. Every wait is
# bounded by --url-filter-timeout, after which the command is disabled and
# what is held is applied unfiltered by it (docs/plugins.md).
"""FilterStage: DONEs held, in order per spider, until the filter command answers."""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable, Iterator
from typing import Any

from wreck.protocol import Done
from wreck.urlnorm import normalize

from .urlfilter import UrlFilter

log = logging.getLogger("urlserver")


class FilterStage:
    """Holds DONEs per spider until the filter command has judged their links."""

    def __init__(self, url_filter: UrlFilter, *, claimed_url: Callable[[int], str | None],
                 known: Callable[[str], bool], apply: Callable[[Any, Done | None, dict[str, bool]], None]) -> None:
        """`claimed_url(trans_id)`: the URL a transaction fetched (the links'
        base), None if unknown; `known(url)`: the crawl has recorded `url`;
        `apply(spider, done, answers)`: hand a DONE (None: the spider's end)
        to the engine with the command's answers."""
        self.url_filter = url_filter
        self._claimed_url = claimed_url
        self._known = known
        self._apply = apply
        self._queues: dict[Any, collections.deque[Done | None]] = {}
        self._tasks: set[asyncio.Task] = set()

    def __len__(self) -> int:
        """DONEs held now."""
        return sum(sum(e is not None for e in q) for q in self._queues.values())

    def wants(self, spider, done: Done) -> bool:
        """This DONE must wait here (its links need answers, or its spider's earlier DONEs do)."""
        if spider in self._queues:
            return True
        return self.url_filter.external is not None and bool(done.outlinks or done.new_url)

    def holds(self, spider) -> bool:
        """`spider` has DONEs held."""
        return spider in self._queues

    def hold(self, spider, done: Done | None) -> None:
        """Queue `done` (None: the spider's end) behind the spider's held DONEs."""
        queue = self._queues.get(spider)
        if queue is None:
            queue = self._queues[spider] = collections.deque()
            task = asyncio.get_running_loop().create_task(self._run(spider, queue))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        queue.append(done)

    def held(self) -> Iterator[tuple[Any, list[int]]]:
        """(spider, trans_ids of its held DONEs): claims to keep alive."""
        for spider, queue in self._queues.items():
            yield spider, [done.trans_id for done in queue if done is not None]

    async def drain(self) -> None:
        """Wait until every held DONE is applied (each batch bounded by the command's timeout)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _run(self, spider, queue: collections.deque[Done | None]) -> None:
        try:
            while queue:
                done = queue[0]
                answers = await self.url_filter.ask(self.links(done)) if done is not None else {}
                queue.popleft()
                self._apply(spider, done, answers)
        except Exception:  # noqa: BLE001 - a bug here must not strand the spider's DONEs
            log.exception("event=filter_stage_failed spider=%s: applying its held DONEs unfiltered", spider)
            while queue:
                self._apply(spider, queue.popleft(), {})
        finally:
            del self._queues[spider]

    def links(self, done: Done) -> list[str]:
        """The URLs of `done` the frontier may ask the filter about, normalised
        as it will normalise them, without those the crawl knows already."""
        base = self._claimed_url(done.trans_id)
        if base is None:
            return []  # an unknown or expired transaction: the engine ignores its DONE
        urls: dict[str, None] = {}  # ordered and unique
        for raw in done.outlinks:
            url = normalize(raw, base)  # as Frontier.discover_links
            if url is not None:
                urls[url] = None
        if done.new_url:
            url = normalize(done.new_url, base)  # as Frontier.discover
            if url is not None:
                urls[url] = None
        return [url for url in urls if not self._known(url)]
