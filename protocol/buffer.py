# A receive buffer after h11's: bytes are appended, complete lines or
# fixed-size blocks are taken from the front. A search for the line end
# resumes where the last one stopped, so feeding a line one byte at a time is
# linear, not quadratic. Consumed bytes are dropped lazily, in bulk.
"""Bounded receive buffer: lines and exact-size blocks."""

from __future__ import annotations

import struct

from .codes import ErrorCode
from .errors import RemoteProtocolError

# Drop consumed bytes from the front once this many have piled up (and they
# are at least half the buffer), so compaction costs amortised O(1) per byte.
_COMPACT_AT = 64 * 1024

# A field this large is copied out once, through a memoryview; a smaller one
# by slicing the bytearray, which copies it twice (to a bytearray, then to
# bytes) but costs less than making a view: measured on this machine, a view
# saves 0.5 us on a 40 KB raw document and loses 0.2 us on a 7 KB zstd frame
# (bench/results/2026-11-24-storebox.md).
_VIEW_FROM = 16 * 1024


class ReceiveBuffer:
    """Bytes received and not yet consumed."""

    __slots__ = ("_data", "_start", "_searched")

    def __init__(self) -> None:
        self._data = bytearray()
        self._start = 0  # first unconsumed byte
        self._searched = 0  # bytes before this index hold no line end

    def __len__(self) -> int:
        return len(self._data) - self._start

    def feed(self, data: bytes) -> None:
        self._data += data

    def take_line(self, limit: int, what: str = "line") -> bytes | None:
        """The next line without its LF, or None if it is not complete yet.

        Raises RemoteProtocolError(LIMIT) as soon as more than `limit` bytes
        are buffered without a line end, so the buffer never grows past it.
        """
        data = self._data
        end = data.find(b"\n", max(self._start, self._searched))
        if end < 0:
            if len(data) - self._start > limit:
                raise RemoteProtocolError(
                    f"{what} longer than {limit} bytes", ErrorCode.LIMIT
                )
            self._searched = len(data)
            return None
        if end - self._start > limit:
            raise RemoteProtocolError(
                f"{what} longer than {limit} bytes", ErrorCode.LIMIT
            )
        line = bytes(data[self._start : end])
        self._consume_to(end + 1)
        return line

    def startswith(self, prefix: bytes) -> bool:
        """Whether the unconsumed bytes begin with `prefix` (all of it in)."""
        return self._data.startswith(prefix, self._start)

    def take_block(self, size: int) -> bytes | None:
        """Exactly `size` bytes, or None until that many have arrived."""
        if len(self._data) - self._start < size:
            return None
        block = bytes(self._data[self._start : self._start + size])
        self._consume_to(self._start + size)
        return block

    def unpack(self, layout: struct.Struct) -> tuple | None:
        """Decode a fixed-size header in place; nothing is consumed."""
        if len(self._data) - self._start < layout.size:
            return None
        return layout.unpack_from(self._data, self._start)

    def take_fields(self, skip: int, sizes: tuple[int, ...]) -> list[bytes] | None:
        """Drop `skip` bytes, then take consecutive fields of `sizes` bytes.

        Each field is copied out as bytes; None (nothing consumed) until all
        of them have arrived.
        """
        if len(self._data) - self._start < skip + sum(sizes):
            return None
        data = self._data
        pos = self._start + skip
        fields = []
        for size in sizes:
            if size < _VIEW_FROM:
                fields.append(bytes(data[pos : pos + size]))
            else:
                # Released at once: a bytearray with a view open cannot resize.
                with memoryview(data) as view:
                    fields.append(bytes(view[pos : pos + size]))
            pos += size
        self._consume_to(pos)
        return fields

    def _consume_to(self, index: int) -> None:
        self._start = index
        self._searched = index
        if index >= _COMPACT_AT and index * 2 >= len(self._data):
            del self._data[:index]
            self._start = 0
            self._searched = 0
