# The store protocol: the text handshake (connection.py), then binary. The
# spider streams fetch records; the store answers each with an ACK once the
# record is durable, may send NOTICE frames, and closes after an ERROR frame.
"""StoreConnection: the spider <-> storeserver protocol, sans-I/O."""

from __future__ import annotations

from . import limits
from .codes import AckResult, ErrorCode, Role
from .connection import Connection
from .errors import LocalProtocolError
from .events import Ack, Dictionary, Error, Record
from .record import RECORD_HEADER, decode_frame, decode_record, encode_acks, encode_frame, encode_record
from .state import STORE_TABLE, State, transition

# What send_acks checks the state table with: every ACK is the same move.
_AN_ACK = Ack(0, AckResult.STORED)


# The capability of a spider that compresses documents with the store's
# dictionary (caps= in its AUTH to a store, docs/protocol.txt 3.1 and 6.7).
ZSTD_CAP = "zstd"


class StoreConnection(Connection):
    """One end of a spider <-> storeserver connection.

    `max_doc_len` bounds the documents a store server accepts (its receive
    side); it can never exceed limits.MAX_DOC_LEN. A spider gives the
    `crawl_id` it learned from the urlserver (5.1), sent in its AUTH; a
    store reads the spider's from `crawl_id` once the AUTH is in (6.1).
    A spider that compresses documents with the store's dictionary gives
    `caps` (ZSTD_CAP, 6.7); a store sends a DICT frame only to such a one.
    """

    _table = STORE_TABLE

    def __init__(
        self, role: Role, *, secret: bytes, nonce: bytes, name: str = "spider",
        max_doc_len: int = limits.MAX_DOC_LEN, crawl_id: str = "", caps: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        super().__init__(role, service="storeserver", secret=secret, nonce=nonce, name=name, crawl_id=crawl_id,
                         caps=caps)
        self.max_doc_len = min(max_doc_len, limits.MAX_DOC_LEN)

    def partial_record_bytes(self) -> int:
        """What the record now arriving will hold once complete: its full size
        once its header is in, else the bytes buffered so far (0 between
        records). A receiver counts this against its memory bound before it
        reads the rest (docs/protocol.txt 6.2: the header gives every length)."""
        buf = self._buf
        if not self.opened or not len(buf):
            return len(buf)
        header = buf.unpack(RECORD_HEADER)
        if header is None:
            return len(buf)
        return max(len(buf), RECORD_HEADER.size + header[6] + header[7] + header[8])

    def send_acks(self, acks: list[tuple[int, AckResult]]) -> bytes:
        """The ACK frames for (doc_id, result) pairs, as send(Ack(...)) of
        each would give them: the state checked once, not per record (a
        store acks a whole commit at once, 6.5)."""
        if self.state is State.ERROR:
            raise LocalProtocolError("connection is in the error state: only an Error may be sent")
        transition(self._table, self.our_role, self.state, _AN_ACK, local=True)  # ACK leaves the state as it is
        return encode_acks(acks)

    def _decode_open(self) -> object:
        if self.our_role is Role.SERVER:
            return decode_record(self._buf, self.max_doc_len)
        return decode_frame(self._buf)

    def _encode_open(self, event: object) -> bytes:
        if type(event) is Record:
            return encode_record(event)
        if self.our_role is Role.CLIENT:
            raise LocalProtocolError("a spider has no frame but records; close the connection instead")
        if type(event) is Dictionary and ZSTD_CAP not in self.caps:
            raise LocalProtocolError(f"spider {self.name} did not announce caps={ZSTD_CAP}: it gets no dictionary")
        return encode_frame(event)


def other_crawl(kept: str, sent: str, name: str) -> Error:
    """The ERROR a store that keeps crawl `kept` sends a spider `name` of
    crawl `sent`, then closes (docs/protocol.txt 6.1, example 9.20)."""
    return Error(ErrorCode.CRAWL, f"spider {name} works for crawl {sent}, but this store holds crawl {kept}: "
                                  f"a store keeps one crawl's records; give this crawl its own store")
