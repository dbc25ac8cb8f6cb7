# zstd compression with a dictionary trained from a crawl's own documents.
#
# Writer side (Compressor, owned by the one writer thread): documents are
# compressed without a dictionary (dict id 0) until `train_docs` samples
# are in hand; a background thread then trains a dictionary, and the writer
# stores it in the same transaction as the first document that uses it, so
# no document ever refers to a dictionary that is not on disk. A later
# retrain gets a new id; old ids are never reused or deleted, so every older
# document stays readable. Frames carry their content size and a checksum:
# a corrupted document is detected on read, never returned silently.
#
# Reader side (Decompressors): one zstd decompressor per dictionary id,
# loaded on first use through a callback.
#
# Spiders' frames (SpiderFrames, docs/protocol.txt 6.7): once a dictionary is
# committed, the store gives it to the spiders that can compress, and they
# send documents as the frames it would have written. The loop checks each
# such frame's header against the committed dictionaries (a few
# microseconds: no decompression, which is the work moved to the spiders);
# the writer decompresses one only where it needs the document itself
# (--near-dups, document hooks of --plugin).
"""Dictionary-trained zstd for documents."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import zstandard as zstd

from wreck.protocol import Dictionary, Record

from .layout import NO_DICT

# fastCover parameters fixed rather than searched: the search takes minutes
# on a few thousand samples; these are zstd's defaults for its CLI.
_TRAIN_K = 1024
_TRAIN_D = 8
# fastCover's acceleration (1-10: fewer positions of the samples scored).
# At 8 the store's one training took 0.85 CPU-s instead of 1.44 (zstd's
# default, 1) on 2,000 bench-store documents, and the dictionary compressed
# unseen pages as well (ratio 7.07 against 7.04; 2026-11-24, issue 16).
_TRAIN_ACCEL = 8
# Batches at least this large are compressed in parallel, on every core:
# below it, handing work to threads costs more than it saves. The threads and
# their zstd contexts live as long as the Compressor: zstandard's
# multi_compress_to_buffer made both afresh for every batch, each new context
# loading the 1 MiB dictionary again, about 5 CPU-ms a batch (a batch of 32:
# 0.45 against 0.40 CPU-ms a document; bench/results/2026-11-25-s11-store11.md).
_PARALLEL_FROM = 8
_THREADS = max(2, os.cpu_count() or 1)


class CorruptDocument(Exception):
    """A stored document failed to decompress or its checksum did not match."""


class Compressor:
    """Compresses documents; trains a dictionary from the first ones."""

    def __init__(
        self, *, level: int, dict_size: int, train_docs: int, sample_bytes: int,
        dict_id: int = NO_DICT, dict_data: bytes | None = None,
    ) -> None:  # fmt: skip
        self.level = level
        self.dict_size = dict_size
        self.train_docs = train_docs
        self.sample_bytes = sample_bytes
        self.dict_id = dict_id
        self._dict_data = dict_data
        self._cctx = self._make(dict_data)
        self._pool: ThreadPoolExecutor | None = None  # made for the first large batch
        self._local = threading.local()  # each pool thread's context, made for self._cctx
        self._samples: list[bytes] = []
        self._training: threading.Thread | None = None
        self._trained: tuple[int, bytes] | None = None  # set by the trainer thread
        self.wants_samples = dict_data is None and train_docs > 0

    def _make(self, dict_data: bytes | None) -> zstd.ZstdCompressor:
        d = zstd.ZstdCompressionDict(dict_data) if dict_data else None
        return zstd.ZstdCompressor(level=self.level, dict_data=d, write_checksum=True, write_content_size=True)

    def _sample(self, document: bytes) -> None:
        if document:
            self._samples.append(document[: self.sample_bytes])
            if len(self._samples) >= self.train_docs:
                self._start_training()

    def compress(self, document: bytes) -> tuple[int, bytes]:
        """(dict id, compressed frame)."""
        if self.wants_samples:
            self._sample(document)
        return self.dict_id, self._cctx.compress(document)

    def compress_many(self, documents: list[bytes]) -> tuple[int, list[bytes]]:
        """(dict id, frames) for a batch, compressed on all cores in zstd's
        own threads (the GIL is released): a batch of a group commit."""
        for d in documents:
            if not self.wants_samples:
                break
            self._sample(d)
        if len(documents) < _PARALLEL_FROM or not all(documents):
            return self.dict_id, [self._cctx.compress(d) for d in documents]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=_THREADS, thread_name_prefix="zstd-compress")
        step = -(-len(documents) // _THREADS)
        slices = self._pool.map(self._compress_slice, [documents[i : i + step] for i in range(0, len(documents), step)])
        return self.dict_id, [frame for frames in slices for frame in frames]

    def _compress_slice(self, documents: list[bytes]) -> list[bytes]:
        # In a pool thread: zstd releases the GIL while it compresses.
        local = self._local
        if getattr(local, "of", None) is not self._cctx:
            local.of, local.cctx = self._cctx, self._make(self._dict_data)
        return [local.cctx.compress(d) for d in documents]

    def close(self) -> None:
        """End the compressing threads (they are idle once the writer stopped)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def _start_training(self) -> None:
        self.wants_samples = False
        samples, self._samples = self._samples, []
        new_id = self.dict_id + 1

        def train() -> None:
            try:
                d = zstd.train_dictionary(self.dict_size, samples, k=_TRAIN_K, d=_TRAIN_D, accel=_TRAIN_ACCEL,
                                          threads=1)
            except zstd.ZstdError:
                return  # too few or too similar samples: stay without a dictionary
            self._trained = (new_id, d.as_bytes())

        self._training = threading.Thread(target=train, name="zstd-dict-train", daemon=True)
        self._training.start()

    def take_new_dict(self) -> tuple[int, bytes] | None:
        """A freshly trained dictionary, once: the caller must store it in
        the transaction that stores the first document compressed with it,
        then call use_dict()."""
        trained, self._trained = self._trained, None
        return trained

    def use_dict(self, dict_id: int, data: bytes) -> None:
        self.dict_id = dict_id
        self._dict_data = data
        self._cctx = self._make(data)

    def request_retrain(self) -> None:
        """Train a new dictionary from the next `train_docs` documents."""
        if self._training is None or not self._training.is_alive():
            self.wants_samples = self.train_docs > 0

    def wait_for_training(self, timeout: float | None = None) -> None:
        """For tests and benchmarks: let a training in progress finish."""
        if self._training is not None:
            self._training.join(timeout)


class Decompressors:
    """Decompresses documents; dictionaries are loaded by id on first use."""

    def __init__(self, load_dict: Callable[[int], bytes | None]) -> None:
        self._load = load_dict
        self._by_id: dict[int, zstd.ZstdDecompressor] = {NO_DICT: zstd.ZstdDecompressor()}

    def decompress(self, dict_id: int, payload: bytes | memoryview, doc_len: int, *, what: str = "document") -> bytes:
        dctx = self._by_id.get(dict_id)
        if dctx is None:
            data = self._load(dict_id)
            if data is None:
                raise CorruptDocument(f"{what} refers to dictionary {dict_id}, which is not in the store")
            dctx = self._by_id[dict_id] = zstd.ZstdDecompressor(dict_data=zstd.ZstdCompressionDict(data))
        try:
            out = dctx.decompress(payload, max_output_size=max(doc_len, 1))
        except zstd.ZstdError as exc:
            raise CorruptDocument(f"{what} does not decompress: {exc}") from None
        if len(out) != doc_len:
            raise CorruptDocument(f"{what} decompressed to {len(out)} bytes, {doc_len} were stored")
        return out


class SpiderFrames:
    """The dictionaries spiders may compress with: those committed, by store
    id, with zstd's own id (the one a frame header names) and their bytes.
    Added to by the loop, read by the writer thread (decompress)."""

    def __init__(self, level: int) -> None:
        self.level = level
        self._zstd_id: dict[int, int] = {}
        self._data: dict[int, bytes] = {}
        self.offer: Dictionary | None = None  # the DICT frame of the newest dictionary (6.7)
        self._dctx = Decompressors(self._data.get)

    def add(self, dict_id: int, data: bytes) -> Dictionary:
        """Accept frames made with dictionary `dict_id` from now on; the DICT
        frame to give the spiders."""
        self._data[dict_id] = data
        self._zstd_id[dict_id] = zstd.ZstdCompressionDict(data).dict_id()
        self.offer = Dictionary(dict_id, self.level, data)
        return self.offer

    def problem(self, record: Record) -> str | None:
        """Why the store cannot take `record`'s frame as it is, or None.

        Checked: the frame header (RFC 8878 3.1.1) names the zstd id of a
        dictionary this store committed under the record's dict id, declares
        the record's doc_len as its content size, and has a checksum. Not
        checked: that its blocks decompress to that size. A spider proved the
        shared secret, so a mismatch there is a bug, not an attack; a reader
        decompresses with the stored doc_len as its bound and checks the
        checksum (Decompressors), so such a bug would show as a corrupt
        document, never as other bytes. Decompressing here would cost what
        the spider's compression saves."""
        p = record.packed
        want = self._zstd_id.get(p.dict_id)
        if want is None:
            return f"dictionary {p.dict_id} is not one this store gave"
        try:
            params = zstd.get_frame_parameters(record.document)
        except zstd.ZstdError as exc:
            return f"not a zstd frame ({exc})"
        if params.dict_id != want:
            return f"frame made with zstd dictionary {params.dict_id}, not {want} (dictionary {p.dict_id})"
        if params.content_size != p.doc_len:
            return f"frame of {params.content_size} bytes, the record says {p.doc_len}"
        if not params.has_checksum:
            return "frame without a checksum"
        return None

    def decompress(self, record: Record) -> bytes:
        """The document of a packed record (CorruptDocument if its frame does
        not decompress to doc_len bytes): for the writer's --near-dups and
        document hooks only."""
        p = record.packed
        return self._dctx.decompress(p.dict_id, record.document, p.doc_len, what=f"record {record.doc_id}'s frame")
