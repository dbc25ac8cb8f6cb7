# One spider worker process: a uvloop event loop, one urlserver connection
# (a UrlSession at a time) and one StoreClient per store server. It connects
# with backoff, learns the crawl settings from the handshake, starts the
# store clients the settings name, and runs sessions until stopped. When the
# urlserver is one partition of several (SET partitions, docs/partitions.md)
# it keeps a connection to each of the others the same way, its concurrency
# split evenly among the partitions connected at the moment. A
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
from wreck.protocol.handshake import CAP_AFTER, CAP_COMMITTED, CAP_RECORD, NONCE_BYTES
from wreck.protocol.settings import CrawlSettings, split_host_port

from .peer import Backoff, PeerError, Refused, open_peer
from .settings import DEFAULT_CONCURRENCY  # declared with the --concurrency setting
from .storeclient import StoreClient
from .urlclient import UrlSession

LOG = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_REFUSED = 2  # the urlserver or a store refused us for good: do not restart
# What this spider announces in its AUTH to the urlserver (docs/protocol.txt
# 3.1): it honours after= (urlclient.py) and nofetch= (nofetch.py), and
# leaves out of its DONEs the links COMMITTED made known (sentlinks.py).
CAPS = (CAP_AFTER, CAP_RECORD, CAP_COMMITTED)


@dataclasses.dataclass(frozen=True)
class WorkerOptions:
    connect: str  # urlserver HOST:PORT
    secret: bytes = b""
    name: str = "spider"
    concurrency: int = DEFAULT_CONCURRENCY


class Worker:
    def __init__(self, options: WorkerOptions) -> None:
        self.options = options
        split_host_port(options.connect)  # ValueError before anything starts
        self.stores: dict[str, StoreClient] = {}
        self.session: UrlSession | None = None  # the --connect urlserver's session
        self.sessions: dict[str, UrlSession] = {}  # every urlserver partition's session, by address
        self._links: dict[str, asyncio.Task] = {}  # the other partitions' connection loops (docs/partitions.md)
        self.stopping = asyncio.Event()
        self.refused: PeerError | None = None  # a store refused us for good

    async def run(self) -> int:
        try:
            code = await self._connect_loop(self.options.connect)
            if code == EXIT_OK:
                for task in list(self._links.values()):
                    code = max(code, await task)  # they end when stopping is set
            if code == EXIT_OK and self.refused is not None:
                LOG.error("giving up: a store server refused this spider")
                code = EXIT_REFUSED
            return code
        finally:
            self.stop()
            for task in self._links.values():
                task.cancel()
            for store in self.stores.values():
                await store.stop()

    async def _connect_loop(self, address: str) -> int:
        """Keep a session with the urlserver at `address` until stopped; an
        exit code (EXIT_REFUSED stops the whole worker)."""
        backoff = Backoff()
        what = f"urlserver {address}"
        host, port = split_host_port(address)
        # After the urlserver's BYE its close and absence are a normal end (a
        # finished crawl), not trouble: say so at INFO until it is back.
        quiet = False
        while not self.stopping.is_set():
            conn = ControlConnection(Role.CLIENT, secret=self.options.secret,
                                     nonce=os.urandom(NONCE_BYTES), name=self.options.name, caps=CAPS)
            try:
                peer, wire = await open_peer(host, port, conn, what)
                settings = CrawlSettings.from_wire(wire)
            except Refused as exc:
                LOG.error("%s; %s. Giving up.", exc, exc.hint)
                self.stop()
                return EXIT_REFUSED
            except ProtocolError as exc:
                LOG.error("%s announced unusable settings: %s. Giving up.", what, exc)
                peer.close()
                self.stop()
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
            self._partitions(settings)
            session = UrlSession(peer, settings, self._stores_for(settings), concurrency=self.options.concurrency)
            if address == self.options.connect:
                self.session = session
            self.sessions[address] = session
            self._share()
            stop_wait = asyncio.ensure_future(self.stopping.wait())
            run = asyncio.ensure_future(session.run())
            await asyncio.wait((stop_wait, run), return_when=asyncio.FIRST_COMPLETED)
            stop_wait.cancel()
            if not run.done():
                peer.close()
            error = await run
            self.sessions.pop(address, None)
            self._share()
            if isinstance(error, Refused):
                LOG.error("%s. Giving up.", error)
                self.stop()
                return EXIT_REFUSED
            quiet = session.bye is not None
            if not self.stopping.is_set():
                delay = backoff.delay()
                text = f"{what} finished ({session.bye})" if quiet else error or f"{what} closed"
                LOG.log(logging.INFO if quiet else logging.WARNING, "%s; reconnecting in %.1f s", text, delay)
                await self._sleep(delay)
        return EXIT_OK

    def _partitions(self, settings: CrawlSettings) -> None:
        """A partitioned crawl (SET partitions, docs/partitions.md): connect
        to every other partition too, with the same secret and name."""
        for address in settings.partitions:
            if address not in self._links and address != self.options.connect:
                self._links[address] = asyncio.ensure_future(self._connect_loop(address))

    def _share(self) -> None:
        """Split the concurrency evenly among the urlservers connected now: a
        partition that is down gets none, its share goes to the others."""
        if not self.sessions:
            return
        share = max(1, self.options.concurrency // len(self.sessions))
        for session in self.sessions.values():
            session.resize(share)

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
