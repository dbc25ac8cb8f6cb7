# Compression on the spider (docs/protocol.txt 6.7). A store that trained its
# zstd dictionary gives it, with its level, to every spider that announced
# caps=zstd; from then on the spider sends each document as the frame the
# store would have written (same level, same dictionary, content size and
# checksum in the frame) with what the store reads from the raw document: its
# length, its header block's length and the body's hash (the first 16 bytes
# of its SHA-256, the store's duplicate key). The store writes the frame as it
# comes: the CPU of zstd and of the hash moves from the one store to the
# many spiders.
"""Packer: a record's document compressed with its store's dictionary."""

from __future__ import annotations

import msgspec
import zstandard as zstd

from wreck.protocol import Dictionary, Packed, Record
from wreck.protocol.record import body_digest, head_length

# Larger documents go raw, for the store to compress in its own threads: this
# runs on the worker's event loop, and 1 MiB at zstd level 3 with a 1 MiB
# dictionary takes about 2.5 CPU-ms here (a 32 MiB one would hold up every
# other transfer of the worker for about 80 ms). Pages are 15 to 40 KB.
PACK_MAX_BYTES = 1024 * 1024


class Packer:
    """One store's dictionary, ready to compress records for that store."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dict_id = dictionary.dict_id
        self.level = dictionary.level
        data = zstd.ZstdCompressionDict(dictionary.data)
        # Exactly the store's parameters (storeserver/compress.py Compressor),
        # so that the frame is the one it would have written.
        self._cctx = zstd.ZstdCompressor(level=self.level, dict_data=data, write_checksum=True,
                                         write_content_size=True)

    def pack(self, record: Record) -> Record:
        """`record` with its document as this store's zstd frame (6.7); an
        empty document (no response) or one over PACK_MAX_BYTES stays as it is."""
        document = record.document
        if not document or len(document) > PACK_MAX_BYTES or record.packed is not None:
            return record
        head = head_length(document)
        packed = Packed(self.dict_id, len(document), head, body_digest(document, head))
        return msgspec.structs.replace(record, document=self._cctx.compress(document), packed=packed)

