# The dialling side of the partition links (docs/protocol.txt 5.10,
# docs/partitions.md): one task per other partition J keeps a connection to
# J's control address, opens it as role "partition" with this partition's
# index as name, checks that J answers as partition J of the same crawl, and
# sends the outbox's batches for J in sequence order, at most WINDOW
# unacknowledged at once. Each ACK is handed to the engine (Crawl.links_acked:
# the batch leaves the outbox with the next commit). A lost connection is
# dialled again with backoff, and every batch still in the outbox is sent
# again from its oldest: the receiver recognises a resend by its sequence
# number. The receiving side is the urlserver's ControlPeer (server.py).
# The same connection carries this partition's IP-token requests to J, the
# owner of the addresses J arbitrates (IPWANT, IPRETURN out; IPGRANT, IPRECALL
# in: docs/partitions.md, Politeness across partitions): the engine is told
# when the connection opens and ends (Crawl.token_link), since a holder's
# tokens live and die with it.
"""PeerLinks: this partition's connections to the others."""

from __future__ import annotations

import asyncio
import logging
import os

from wreck.protocol import (NEED_DATA, NONCE_BYTES, ConnectionClosed, Error, Hello, LinksAck, PeerConnection,
                            ProtocolError, Ready)
from wreck.protocol.iptokens import IpGrant, IpRecall
from wreck.protocol.settings import split_host_port

log = logging.getLogger("urlserver")

WINDOW = 8  # batches sent and not yet acknowledged: enough to cover a round trip and a commit
CONNECT_TIMEOUT_S = 10.0  # a dial and its handshake
BACKOFF_S = (0.1, 5.0)  # first and longest wait before dialling again
READ_SIZE = 65536


class LinkRefused(Exception):
    """The peer is not the partition this one expects (a --peers list in
    another order, another crawl, another partition count)."""


class PeerLinks:
    """Dial every other partition and keep its outbox flowing."""

    def __init__(self, server) -> None:
        self.server = server
        s = server.settings
        self.me, self.count, self.peers, self.secret = s.partition, s.partitions, s.peers, s.secret
        self.others = [j for j in range(self.count) if j != self.me]
        self._wake = {j: asyncio.Event() for j in self.others}
        self.up: dict[int, bool] = {j: False for j in self.others}
        self.tokens_out: dict[int, list] = {j: [] for j in self.others}  # IP-token messages to send
        self._tasks: list[asyncio.Task] = []

    def start(self) -> None:
        self.server.crawl.forward.on_batches = self.batches_written
        for j in self.others:
            self._wake[j].set()  # the outbox may hold batches from the last run
            self._tasks.append(asyncio.get_running_loop().create_task(self._run(j)))

    def stop(self) -> None:
        for task in self._tasks:
            task.cancel()

    def send_token(self, dest: int, message) -> None:
        """Queue an IP-token message for partition `dest` (dropped while its
        connection is down: the engine asks again when it is back)."""
        if self.up[dest]:
            self.tokens_out[dest].append(message)
            self._wake[dest].set()

    def batches_written(self, dests: list[int]) -> None:
        """A commit wrote batches for `dests` (Frontier.commit)."""
        for j in dests:
            self._wake[j].set()

    async def _run(self, dest: int) -> None:
        wait = BACKOFF_S[0]
        while True:
            try:
                await self._session(dest)
                wait = BACKOFF_S[0]
            except asyncio.CancelledError:
                raise
            except LinkRefused as exc:
                log.error("event=partition_link_refused partition=%d address=%s reason=%r", dest,
                          self.peers[dest], str(exc))
                wait = BACKOFF_S[1]
            except (OSError, EOFError, ProtocolError, asyncio.TimeoutError) as exc:
                log.info("event=partition_link_down partition=%d address=%s reason=%r", dest, self.peers[dest],
                         str(exc) or type(exc).__name__)
            if self.up[dest]:
                self.server.token_link(dest, dialled=True, up=False)
            self.up[dest] = False
            await asyncio.sleep(wait)
            wait = min(wait * 2, BACKOFF_S[1])

    async def _session(self, dest: int) -> None:
        host, port = split_host_port(self.peers[dest])
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
        try:
            conn = PeerConnection(secret=self.secret, nonce=os.urandom(NONCE_BYTES), name=str(self.me))
            await asyncio.wait_for(self._handshake(reader, writer, conn, dest), CONNECT_TIMEOUT_S)
            self.up[dest] = True
            self.tokens_out[dest] = []
            log.info("event=partition_link_up partition=%d address=%s", dest, self.peers[dest])
            self.server.token_link(dest, dialled=True, up=True)
            acked = asyncio.Queue()
            reading = asyncio.ensure_future(self._read(reader, conn, dest, acked))
            try:
                await self._send(writer, conn, dest, acked, reading)
            finally:
                reading.cancel()
        finally:
            writer.close()

    async def _handshake(self, reader, writer, conn: PeerConnection, dest: int) -> None:
        while True:
            event = await _next(reader, conn)
            if type(event) is Hello:
                writer.write(conn.authenticate())
            elif type(event) is Ready:
                break
            elif type(event) is Error:
                raise LinkRefused(f"{event.code.name.lower()}: {event.reason}")
        got = event.settings
        crawl_id = self.server.crawl.crawl_id
        if got.get("partition") != str(dest) or len((got.get("partitions") or "").split(",")) != self.count:
            raise LinkRefused(f"{self.peers[dest]} is partition {got.get('partition', '0')} of "
                              f"{got.get('partitions', 'one')}, not partition {dest} of {self.count}")
        if got.get("crawl_id") != crawl_id:
            raise LinkRefused(f"{self.peers[dest]} serves crawl {got.get('crawl_id')}, not {crawl_id}")

    async def _read(self, reader, conn: PeerConnection, dest: int, acked: asyncio.Queue) -> None:
        """ACKs in: each to the engine; the link's end ends the session."""
        while True:
            event = await _next(reader, conn)
            if type(event) is LinksAck:
                self.server.links_acked(dest, event.seq)
                acked.put_nowait(event.seq)
            elif type(event) in (IpGrant, IpRecall):
                self.server.token_received(dest, event)
            elif type(event) is Error:
                raise LinkRefused(f"{event.code.name.lower()}: {event.reason}")

    async def _send(self, writer, conn: PeerConnection, dest: int, acked: asyncio.Queue,
                    reading: asyncio.Future) -> None:
        forward = self.server.crawl.forward
        sent, unacked = 0, set()
        while True:
            while not acked.empty():
                unacked.discard(acked.get_nowait())
            self._wake[dest].clear()  # before the outbox is read: a commit after the read sets it again
            tokens, self.tokens_out[dest] = self.tokens_out[dest], []
            if tokens:
                writer.write(b"".join(conn.send(message) for message in tokens))
            room = WINDOW - len(unacked)
            batches = forward.batches(dest, after=sent, limit=room) if room > 0 else []
            for batch in batches:
                writer.write(conn.send(batch))
                sent = batch.seq
                unacked.add(batch.seq)
            if batches:
                await writer.drain()
                continue
            waits = [asyncio.ensure_future(self._wake[dest].wait()), asyncio.ensure_future(acked.get())]
            done, pending = await asyncio.wait([*waits, reading], return_when=asyncio.FIRST_COMPLETED)
            for w in waits:
                if w in done and w is waits[1]:
                    unacked.discard(w.result())
                w.cancel()
            if reading in done:
                reading.result()  # its error, or the end of the link
                raise EOFError("partition link closed")


async def _next(reader, conn: PeerConnection) -> object:
    """The next event of the link (EOFError at its end)."""
    while True:
        event = conn.next_event()
        if event is not NEED_DATA:
            if type(event) is ConnectionClosed:
                raise EOFError("closed by the peer")
            return event
        data = await reader.read(READ_SIZE)
        conn.receive_data(data)
