# The store's figures on the dashboard (docs/dashboard.md, "Store"): the
# urlserver never reads the store; the storeserver serves its own figures
# at --http (GET /status: documents, bytes, compressed bytes, disk free) and
# the urlserver, told that address by --store-http (wreck-crawl wires both),
# asks every POLL_S with a deadline of TIMEOUT_S, off the engine's path.
# /status shows the last answer with its time; when the store stops
# answering, the figures are dropped after STALE_S rather than shown as if
# current.
"""StoreView: the store's figures, polled from its status address."""

from __future__ import annotations

import asyncio
import logging
import time

from wreck.statusport import StatusUnavailable, fetch

log = logging.getLogger("urlserver")
POLL_S = 5.0  # the dashboard refreshes every few seconds; the store's counts move per commit
TIMEOUT_S = 2.0  # a store that takes longer is busy or gone: ask again next time
STALE_S = 60.0  # an answer older than this is not shown


class StoreView:
    """The last figures answered by the store at `address`."""

    def __init__(self, address: str, *, clock=time.time) -> None:
        self.address = address
        self.clock = clock
        self._last: dict | None = None
        self._task: asyncio.Task | None = None

    @property
    def figures(self) -> dict | None:
        """The store's last answer (with its "time"), or None if there is none recent."""
        last = self._last
        if last is None or self.clock() - last["time"] > STALE_S:
            return None
        return last

    async def poll_once(self) -> None:
        try:
            answer = await fetch(self.address, "/status", timeout=TIMEOUT_S)
        except StatusUnavailable as exc:
            log.debug("event=store_status_unavailable reason=%r", str(exc))
            return
        self._last = {**answer, "time": self.clock()}  # when heard, by this clock

    def start(self) -> None:
        async def loop() -> None:
            while True:
                await self.poll_once()
                await asyncio.sleep(POLL_S)

        self._task = asyncio.get_running_loop().create_task(loop())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
