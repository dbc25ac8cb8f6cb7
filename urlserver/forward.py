# Links between urlserver partitions, on disk (docs/partitions.md): the
# outbox of the links this partition found for the others' hosts, and the
# last batch applied from each of them. No sockets here: peerlink.py sends
# and receives, the engine (crawl.py, frontier.py) calls these in its
# transaction.
#   - A discovered link of another partition's host is `add`ed: recorded in
#     the `forwarded` database (so a link found on every page goes once) and
#     kept in memory for the transaction; `flush`, called by the frontier's
#     commit, writes them as one batch per destination (split past
#     MAX_PEER_LINKS) under the destination's next sequence number, in the
#     same LMDB commit as the DONE that found them; `durable` (once that
#     commit is synced) lets them leave: a batch sent before could be lost
#     with a kill -9 and its number given to other links, which the
#     receiver would then take for a resend.
#   - `acked` deletes a batch (in the next commit; a kill before it means a
#     resend, which the receiver recognises by its sequence number).
#   - The receiver's side: `last_applied` and `applied` keep, per sender,
#     the last batch applied, written in the commit that applies it.
# Counters live in the meta database: "peer_out:J" the next sequence number
# for partition J, "peer_in:I" the last applied from partition I.
"""Forwarder: the outbox and the applied-batch marks of a partition."""

from __future__ import annotations

import struct
import msgspec

from wreck.protocol.events import Links, PeerLink
from wreck.protocol.limits import MAX_PEER_LINKS, MAX_URL_LEN
from wreck.protocol.peer import MAX_DEPTH

from .db import U64, Db
from .partition import partition_of

OUTKEY = struct.Struct("!BQ")  # destination partition, batch sequence number
_ENCODE = msgspec.msgpack.Encoder()
_DECODE = msgspec.msgpack.Decoder(tuple[PeerLink, ...])


class Forwarder:
    """One partition's outbox to the others, and what it applied from them."""

    def __init__(self, db: Db, *, partition: int, partitions: int) -> None:
        self.db = db
        self.partition = partition
        self.partitions = partitions
        self._pending: dict[int, list[PeerLink]] = {}  # destination -> links of the open transaction
        self.forwarded = 0  # links put in the outbox by this run (status)
        self.applied = 0  # links received and applied by this run (status)
        self.on_batches = None  # callback(destinations) once a commit's batches are durable (peerlink.py)
        self._flushed: dict[int, int] = {}  # destination -> last batch of the commit not yet durable
        # destination -> last batch that may be sent: durable, so a kill cannot take it back and
        # number other links the same (docs/protocol.txt 5.9, 5.10); at the start, all of them
        with db.begin() as txn:
            self._sendable = {j: self._counter(txn, f"peer_out:{j}", 1) - 1 for j in range(partitions)
                              if j != partition}

    def owner(self, host: str) -> int:
        """The partition that owns `host`."""
        return partition_of(host, self.partitions)

    def foreign(self, host: str) -> bool:
        return partition_of(host, self.partitions) != self.partition

    # -- the sending side

    def add(self, txn, url: str, fp: bytes, host: str, depth: int, hops: int = 0, *, seed: bool = False,
            via_url: str = "", path: str = "") -> bool:
        """Forward `url` (normalised, of `host`, another partition's) unless
        it was before; True if it is new. A seed goes as one (seed=1), so
        its owner admits it whatever its scope (docs/partitions.md); a link
        with the URL it was found on (via=) and its hop path (path=,
        urlserver/lineage.py), which the owner keeps in its record."""
        if txn.get(fp, db=self.db.forwarded) is not None:
            return False
        txn.put(fp, b"", db=self.db.forwarded)
        extra = {"hops": str(hops)} if hops else {}
        if seed:
            extra["seed"] = "1"
        if via_url and len(via_url) <= MAX_URL_LEN:
            extra["via"] = via_url
        if path:
            extra["path"] = path
        self._pending.setdefault(self.owner(host), []).append(PeerLink(url, min(depth, MAX_DEPTH), extra))
        return True

    def flush(self, txn) -> list[int]:
        """Write the open transaction's links as batches (in `txn`, before
        its commit); the destinations that got one."""
        if not self._pending:
            return []
        for dest, links in self._pending.items():
            seq = self._counter(txn, f"peer_out:{dest}", 1)
            for start in range(0, len(links), MAX_PEER_LINKS):
                txn.put(OUTKEY.pack(dest, seq), _ENCODE.encode(links[start:start + MAX_PEER_LINKS]),
                        db=self.db.outbox)
                seq += 1
                self.forwarded += len(links[start:start + MAX_PEER_LINKS])
            txn.put(f"peer_out:{dest}".encode(), U64.pack(seq), db=self.db.meta)
            self._flushed[dest] = seq - 1
        dests, self._pending = list(self._pending), {}
        return dests

    def durable(self) -> None:
        """The commit that wrote the last flush's batches is durable: they may leave."""
        if not self._flushed:
            return
        dests, flushed, self._flushed = list(self._flushed), self._flushed, {}
        self._sendable.update(flushed)
        if self.on_batches is not None:
            self.on_batches(dests)

    def abort(self) -> None:
        """The open transaction was dropped: so are its links."""
        self._pending.clear()
        self._flushed.clear()

    def batches(self, dest: int, after: int = 0, limit: int = 1) -> list[Links]:
        """Up to `limit` durable batches for `dest` with a sequence number
        above `after`, in order (read in a short transaction of their own)."""
        found: list[Links] = []
        last = self._sendable[dest]
        if after >= last:
            return found
        with self.db.begin() as txn:
            cur = txn.cursor(db=self.db.outbox)
            if not cur.set_range(OUTKEY.pack(dest, after + 1)):
                return found
            for key, value in cur:
                got, seq = OUTKEY.unpack(key)
                if got != dest or seq > last or len(found) >= limit:
                    break
                found.append(Links(seq, _DECODE.decode(value)))
        return found

    def acked(self, txn, dest: int, seq: int) -> None:
        """Batch `seq` to `dest` is applied there: drop it (in `txn`)."""
        txn.delete(OUTKEY.pack(dest, seq), db=self.db.outbox)

    def waiting(self) -> int:
        """Batches in the outbox, not yet acknowledged (status)."""
        with self.db.begin() as txn:
            return txn.stat(self.db.outbox)["entries"]

    # -- the receiving side

    def last_applied(self, txn, sender: int) -> int:
        return self._counter(txn, f"peer_in:{sender}", 0)

    def applied_batch(self, txn, sender: int, seq: int, links: int) -> None:
        """Batch `seq` of `sender` is applied in `txn`: a resend is recognised."""
        txn.put(f"peer_in:{sender}".encode(), U64.pack(seq), db=self.db.meta)
        self.applied += links

    def _counter(self, txn, name: str, default: int) -> int:
        raw = txn.get(name.encode(), db=self.db.meta)
        return U64.unpack(raw)[0] if raw else default
