# The spider's side of one store server. submit(record, on_ack) encodes the
# record once, keeps it until the store acks its doc_id, and writes it when
# the connection is open. A background task keeps the connection: connect,
# handshake, resend every unacked record in submission order, wait until
# it drops, back off, repeat. Records survive store restarts this way; the
# worker bounds how many can pile up by not asking for more URLs.
# A store reached on a loopback address that announces a Unix-domain socket
# (SET unix, docs/protocol.txt 6.6) is on this machine: the client moves to
# that socket before it sends any record and reconnects there afterwards
# (through TCP again when that fails: the store may have restarted without
# it); a socket it cannot use at all leaves it on TCP for good. The same records and
# frames cost the kernel less over it than over loopback TCP.
# Compression (docs/protocol.txt 6.7): the client announces caps=zstd; once
# the store sends its dictionary (DICT, after each handshake), records are
# sent as the store's zstd frames (docpack.py) and the raw record is kept
# until the ack. A store that refuses a frame (ERROR code FRAME) gets every
# unacked record raw again, and this client compresses no more for it.
"""StoreClient: records out, acks back, reconnect and resend."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
from collections.abc import Callable

from wreck.protocol import Ack, AckResult, Dictionary, ErrorCode, Notice, Record, Role, StoreConnection
from wreck.protocol.handshake import NONCE_BYTES
from wreck.protocol.record import encode_record
from wreck.protocol.settings import split_host_port
from wreck.protocol.store import ZSTD_CAP

from .docpack import Packer

from .peer import Backoff, Peer, PeerError, Refused, open_peer

LOG = logging.getLogger(__name__)

AckCallback = Callable[[AckResult], None]


class StoreClient:
    """One store server's connection and the records it has not acked yet."""

    def __init__(self, address: str, *, secret: bytes, name: str, crawl_id: str = "",
                 on_refused: Callable[[PeerError], None] | None = None, compress: bool = True) -> None:
        self.address = address
        self.crawl_id = crawl_id  # sent in every AUTH: the store refuses another crawl's spider (6.1)
        # Called once if the store refuses us for good (secret, version):
        # retrying cannot help, so the worker stops instead of holding records.
        self.on_refused = on_refused
        self.host, self.port = split_host_port(address)
        self.secret, self.name = secret, name
        self.peer: Peer | None = None
        # doc_id -> (encoded record, waiters, the raw record when it was sent
        # compressed, else None); dicts keep insertion order
        self.unacked: dict[int, tuple[bytes, list[AckCallback], Record | None]] = {}
        self.compress = compress  # announce caps=zstd (6.7)
        self.packer: Packer | None = None  # the store's dictionary, once it gave it on this connection
        self.backoff = Backoff()
        self._task: asyncio.Task | None = None
        self._stopping = False
        # called each time the connection is up again (a session fetches
        # what it parked for this shard meanwhile: urlclient.py)
        self.on_up: set[Callable[[], None]] = set()
        self.unix: str | None = None  # the store's Unix socket, once moved to it (6.6)
        self._unix_failed = False  # it failed once: TCP from then on

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._keep_connected(), name=f"store {self.address}")

    async def stop(self) -> None:
        self._stopping = True
        if self.peer:
            self.peer.close()
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    @property
    def via(self) -> str:
        """How records reach the store: "unix:PATH" or the TCP address."""
        return f"unix:{self.unix}" if self.unix else self.address

    @property
    def connected(self) -> bool:
        """Whether the store's connection is up (else records wait here)."""
        return self.peer is not None and self.peer.is_open

    def submit(self, record: Record, on_ack: AckCallback) -> None:
        """Queue `record`; on_ack(result) once the store has it durably.

        Raises LocalProtocolError if the record cannot be encoded.
        """
        pending = self.unacked.get(record.doc_id)
        if pending is not None:  # the same document again: the first record stands
            pending[1].append(on_ack)
            return
        if self.packer is not None and record.document:
            data = encode_record(self.packer.pack(record))
            self.unacked[record.doc_id] = (data, [on_ack], record)
        else:
            data = encode_record(record)
            self.unacked[record.doc_id] = (data, [on_ack], None)
        if self.connected:
            self.peer.write(data)

    def _on_event(self, event: object) -> None:
        if type(event) is Ack:
            pending = self.unacked.pop(event.doc_id, None)
            if pending is None:
                LOG.warning("store %s acked doc %d, which was not pending", self.address, event.doc_id)
                return
            for waiter in pending[1]:
                waiter(event.result)
        elif type(event) is Dictionary:
            if self.compress:
                self.packer = Packer(event)
                LOG.info("store %s: documents go compressed with its dictionary %d (zstd level %d)", self.address,
                         event.dict_id, event.level)
        elif type(event) is Notice:
            LOG.warning("store %s: notice %d %s", self.address, event.code, event.text)

    def _send_raw(self, error: PeerError) -> None:
        """The store refused a compressed record (6.7): resend all raw, compress no more for it."""
        self.compress = False
        for doc_id, (data, waiters, raw) in list(self.unacked.items()):
            if raw is not None:
                self.unacked[doc_id] = (encode_record(raw), waiters, None)
        LOG.error("%s; sending this store documents uncompressed from now on", error)

    def _refused(self, error: Refused) -> None:
        LOG.error("%s; %s. %d records not stored (the urlserver will hand their URLs out again).",
                  error, error.hint, len(self.unacked))
        if self.on_refused is not None:
            self.on_refused(error)

    async def _keep_connected(self) -> None:
        what = f"store server {self.address}"
        while not self._stopping:
            try:
                peer = await self._connect(what)
            except Refused as exc:
                self._refused(exc)
                return
            except PeerError as exc:
                delay = self.backoff.delay()
                LOG.error("%s; %d records held, retrying in %.1f s", exc, len(self.unacked), delay)
                await asyncio.sleep(delay)
                continue
            self.backoff.reset()
            peer.on_event = self._on_event
            self.peer = peer
            if self.unacked:
                LOG.info("%s: connected, resending %d unacked records", what, len(self.unacked))
                for data, _, _ in list(self.unacked.values()):
                    peer.write(data)
            for callback in list(self.on_up):
                callback()
            error = await peer.closed
            self.peer = None
            self.packer = None  # the next connection's store gives its own (it may be another)
            if error is not None and error.code is ErrorCode.FRAME:
                self._send_raw(error)
            if isinstance(error, Refused):  # after READY: a store of another crawl (6.1)
                self._refused(error)
                return
            if not self._stopping:
                LOG.warning("%s; %d records held", error, len(self.unacked))
                await asyncio.sleep(self.backoff.delay())

    def _connection(self) -> StoreConnection:
        return StoreConnection(Role.CLIENT, secret=self.secret, nonce=os.urandom(NONCE_BYTES), name=self.name,
                               crawl_id=self.crawl_id, caps=(ZSTD_CAP,) if self.compress else ())

    async def _connect(self, what: str) -> Peer:
        """An open connection to the store: over its Unix socket once moved
        there (6.6), else TCP, moving to the socket it announces when the
        store is on this machine. PeerError/Refused as open_peer."""
        if self.unix is not None:
            try:
                return (await open_peer(self.host, self.port, self._connection(), what, unix=self.unix,
                                        on_event=self._on_event))[0]
            except PeerError:  # the store restarting, or without the socket now: TCP tells
                self.unix = None
        peer, settings = await open_peer(self.host, self.port, self._connection(), what, on_event=self._on_event)
        path = settings.get("unix")
        if not path or self._unix_failed or not _loopback(self.host):
            return peer
        try:
            local, _ = await open_peer(self.host, self.port, self._connection(), what, unix=path,
                                       on_event=self._on_event)
        except PeerError as exc:
            LOG.warning("%s: its Unix socket %s failed (%s); using TCP from now on", what, path, exc)
            self._unix_failed = True
            return peer
        peer.close()  # nothing was sent on it: the store just sees a spider leave
        self.unix = path
        LOG.info("%s: records go through its Unix socket %s", what, path)
        return local


def _loopback(host: str) -> bool:
    """Whether `host` is this machine for sure (6.6: only then is an announced path the store's own)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
