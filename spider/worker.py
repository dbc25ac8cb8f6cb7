# One spider worker process: a uvloop event loop, one urlserver connection
# (a UrlSession at a time) and one StoreClient per store server. It connects
# with backoff, learns the crawl settings from the handshake, starts the
# store clients the settings name, and runs sessions until stopped. A
# refusal that retrying cannot fix (wrong secret, other protocol version,
# unusable settings), from the urlserver or from a store, ends the worker
# with EXIT_REFUSED so the supervisor does not restart it in a loop.
"""Worker: run(options) -> exit code."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal

import uvloop

from wreck.protocol import ControlConnection, ProtocolError, Role
from wreck.protocol.handshake import CAP_AFTER, CAP_RECORD, NONCE_BYTES
from wreck.protocol.settings import CrawlSettings, split_host_port

from .peer import Backoff, PeerError, Refused, open_peer
from .settings import DEFAULT_CONCURRENCY  # declared with the --concurrency setting
from .storeclient import StoreClient
from .urlclient import UrlSession

LOG = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_REFUSED = 2  # the urlserver or a store refused us for good: do not restart
# What this spider announces in its AUTH to the urlserver (docs/protocol.txt
# 3.1): it honours after= (urlclient.py) and nofetch= (nofetch.py).
CAPS = (CAP_AFTER, CAP_RECORD)


@dataclasses.dataclass(frozen=True)
class WorkerOptions:
    connect: str  # urlserver HOST:PORT
    secret: bytes = b""
    name: str = "spider"
    concurrency: int = DEFAULT_CONCURRENCY


class Worker:
    def __init__(self, options: WorkerOptions) -> None:
        self.options = options
        self.host, self.port = split_host_port(options.connect)
        self.stores: dict[str, StoreClient] = {}
        self.session: UrlSession | None = None
        self.stopping = asyncio.Event()
        self.refused: PeerError | None = None  # a store refused us for good

    async def run(self) -> int:
        backoff = Backoff()
        what = f"urlserver {self.options.connect}"
        # After the urlserver's BYE its close and absence are a normal end (a
        # finished crawl), not trouble: say so at INFO until it is back.
        quiet = False
        try:
            while not self.stopping.is_set():
                conn = ControlConnection(Role.CLIENT, secret=self.options.secret,
                                         nonce=os.urandom(NONCE_BYTES), name=self.options.name, caps=CAPS)
                try:
                    peer, wire = await open_peer(self.host, self.port, conn, what)
                    settings = CrawlSettings.from_wire(wire)
                except Refused as exc:
                    LOG.error("%s; %s. Giving up.", exc, exc.hint)
                    return EXIT_REFUSED
                except ProtocolError as exc:
                    LOG.error("%s announced unusable settings: %s. Giving up.", what, exc)
                    peer.close()
                    return EXIT_REFUSED
                except PeerError as exc:
                    delay = backoff.delay()
                    LOG.log(logging.INFO if quiet else logging.WARNING, "%s; retrying in %.1f s", exc, delay)
                    await self._sleep(delay)
                    continue
                backoff.reset()
                quiet = False
                LOG.info("connected to %s: stores %s, timeout_req %d ms, max_doc_size %d",
                         what, ",".join(settings.store), settings.timeout_req_ms, settings.max_doc_size)
                self.session = UrlSession(peer, settings, self._stores_for(settings),
                                          concurrency=self.options.concurrency)
                stop_wait = asyncio.ensure_future(self.stopping.wait())
                run = asyncio.ensure_future(self.session.run())
                await asyncio.wait((stop_wait, run), return_when=asyncio.FIRST_COMPLETED)
                stop_wait.cancel()
                if not run.done():
                    peer.close()
                error = await run
                if isinstance(error, Refused):
                    LOG.error("%s. Giving up.", error)
                    return EXIT_REFUSED
                quiet = self.session.bye is not None
                if not self.stopping.is_set():
                    delay = backoff.delay()
                    text = f"{what} finished ({self.session.bye})" if quiet else error or f"{what} closed"
                    LOG.log(logging.INFO if quiet else logging.WARNING, "%s; reconnecting in %.1f s", text, delay)
                    await self._sleep(delay)
            if self.refused is not None:
                LOG.error("giving up: a store server refused this spider")
                return EXIT_REFUSED
            return EXIT_OK
        finally:
            for store in self.stores.values():
                await store.stop()

    def stop(self) -> None:
        self.stopping.set()

    def _store_refused(self, error: PeerError) -> None:
        self.refused = error
        self.stop()

    def _stores_for(self, settings: CrawlSettings) -> list[StoreClient]:
        for address in settings.store:
            if address not in self.stores:
                client = StoreClient(address, secret=self.options.secret, name=self.options.name,
                                     crawl_id=settings.crawl_id, on_refused=self._store_refused)
                client.start()
                self.stores[address] = client
        return [self.stores[a] for a in settings.store]

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.stopping.wait(), seconds)
        except TimeoutError:
            pass


def run(options: WorkerOptions) -> int:
    """Run one worker on uvloop until SIGTERM/SIGINT; its exit code."""

    async def main() -> int:
        worker = Worker(options)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, worker.stop)
        return await worker.run()

    return uvloop.run(main())
