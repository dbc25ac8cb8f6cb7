# Group commit: the one writer, in two stages. The event loop hands each
# record to submit(); the compressing thread waits a few milliseconds after
# the first record of a batch for more and compresses the batch; the
# committing thread writes batches, in order, each in one LMDB transaction
# and, once commit() has returned (fsync done), hands the results back to the
# loop, which only then sends the acks. The two stages overlap (one batch is
# compressed while the one before it is synced), and the loop never waits on
# compression or fsync. The compressing stage also computes each page's
# content fingerprint (on a thread pool, beside zstd) and the plugins'
# document metadata; the committing stage writes them, with the duplicate
# marks, in the document's own transaction (dedup.py).
# A document a spider compressed with the store's dictionary (docs/protocol.txt
# 6.7) is written as it came, its body hash taken from its DIGEST: the
# compressing stage only decompresses it for --near-dups or document hooks. A
# new dictionary is announced (on_dict) once the commit that stores it is done.
#
# Failures never lose a record: on a full map the batch is retried after
# the map is grown; on any other write error (disk full) the batch is held
# and retried with backoff, the loop is told FULL, and RESUMED once a
# commit succeeds again. Records keep queueing meanwhile; the server stops
# reading from sockets once `backlog_bytes` passes its cap.
"""The group-commit writer thread."""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from typing import Any

import lmdb

from wreck.protocol import AckResult, Record, Specific, http_code
from wreck.plugins import DOCUMENT, Plugins

from . import layout as L
from . import settings as S
from .compress import Compressor, CorruptDocument, SpiderFrames
from .dedup import content_type, fingerprint_packed, fingerprint_records
from .store import Prepared, WriteStore

log = logging.getLogger("storeserver")

# Threads computing content fingerprints: one per core, as zstd uses.
FINGERPRINT_THREADS = max(2, os.cpu_count() or 1)

# What the loop gets back per committed record: (reply_to, doc_id, result);
# result None: a spider's frame that did not decompress, not stored (6.7).
Results = list[tuple[Any, int, AckResult | None]]


def record_cost(r: Record) -> int:
    """The memory a queued record holds, as counted against the backlog bound:
    its bytes plus S.RECORD_OVERHEAD, so tiny records sent fast are bounded
    by their number, not only by their bytes (issue 14, finding 4)."""
    # 6.3's fields; the outlinks' length through one join: under half the
    # instructions of sum(map(len, ...)) for a page's 40 links (4.3k against
    # 10.5k, bench/results/2026-11-25-s12-server12.md), on the event loop
    ext = len(r.request) + len("".join(r.outlinks)) + len(r.via)
    return len(r.document) + len(r.url) + ext + S.RECORD_OVERHEAD


def fetch_value(r: Record) -> bytes | None:
    """The `fetch` database's value for `r` (docs/storage.txt), None if the
    spider kept nothing (a spider older than the extension fields)."""
    if not (r.request or r.ip or r.truncated or r.outlinks or r.nofetch or r.refused or r.via or r.hops):
        return None
    return L.encode_fetch(L.FetchInfo(r.request, r.ip, r.truncated, r.outlinks, r.nofetch, r.refused, r.via, r.hops))


class Committer:
    """One writer thread; submit() and backlog_bytes are for the loop."""

    def __init__(
        self, store: WriteStore, compressor: Compressor, *, window_s: float,
        on_commit: Callable[[Results], None], on_full: Callable[[bool, str], None],
        on_fatal: Callable[[BaseException], None], dedup: bool = True, near_dups: bool = True, plugins: Plugins | None = None,
        frames: SpiderFrames | None = None, on_dict: Callable[[int, bytes], None] = lambda dict_id, data: None,
    ) -> None:  # fmt: skip
        self.store = store
        self.dedup = dedup  # fingerprint pages and mark duplicates (dedup.py)
        self.near_dups = near_dups  # ... near ones too (simhash of the text)
        self.plugins = plugins if plugins is not None and plugins.has(DOCUMENT) else None
        self.compressor = compressor
        self.window_s = window_s
        self._on_commit = on_commit  # each callback is called from the writer thread
        self._on_full = on_full
        self._on_fatal = on_fatal
        # The dictionaries spiders compress with (6.7), and who hears of a
        # new one once it is committed.
        self.frames = frames if frames is not None else SpiderFrames(compressor.level)
        self._on_dict = on_dict
        self._queue: deque[tuple[Record, Any]] = deque()
        self._costs: deque[int] = deque()  # record_cost() of each queued record, computed once
        self._cond = threading.Condition()
        self._stopping = False
        self.backlog_bytes = 0  # record_cost() of the records submitted, not yet committed
        # A crawl id the loop adopted (6.1), kept with the next commit: every
        # record of that crawl is submitted after the adoption, so it is in
        # the transaction of the crawl's first records, or an earlier one.
        self.crawl_to_keep = ""
        self.full = False
        self.batches = 0
        # One compressed batch may wait while the one before it commits.
        self._prepared: queue.Queue = queue.Queue(maxsize=1)
        self._pool = ThreadPoolExecutor(max_workers=FINGERPRINT_THREADS, thread_name_prefix="store-fingerprint")
        self._thread = threading.Thread(target=self._run, name="store-compress", daemon=True)
        self._commit_thread = threading.Thread(target=self._run_commits, name="store-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._commit_thread.start()

    def submit(self, record: Record, reply_to: Any) -> None:
        with self._cond:
            cost = record_cost(record)
            self._queue.append((record, reply_to))
            self._costs.append(cost)
            self.backlog_bytes += cost
            if len(self._queue) == 1 or len(self._queue) >= S.MAX_BATCH_RECORDS:
                self._cond.notify()

    def adopt(self, crawl_id: str) -> None:
        """Keep `crawl_id` as the store's crawl with the next commit (called by the loop)."""
        self.crawl_to_keep = crawl_id

    def stop(self, timeout: float | None = None) -> bool:
        """Commit what is queued, then end the thread. False if it is still
        stuck (e.g. the disk is full) after `timeout` seconds."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        deadline = None if timeout is None else time.monotonic() + timeout
        self._thread.join(timeout)
        self._commit_thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not (self._thread.is_alive() or self._commit_thread.is_alive())

    # -- the two writer threads ------------------------------------------------

    def _take_batch(self) -> tuple[list[tuple[Record, Any]], int] | None:
        """The next batch and the record_cost() it holds; None once stopped."""
        with self._cond:
            while not self._queue:
                if self._stopping:
                    return None
                self._cond.wait()
            # Group commit: give other records a few ms to join this batch.
            deadline = time.monotonic() + self.window_s
            while not self._stopping and len(self._queue) < S.MAX_BATCH_RECORDS:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            batch, size, cost = [], 0, 0
            while self._queue and len(batch) < S.MAX_BATCH_RECORDS and size < S.MAX_BATCH_BYTES:
                item = self._queue.popleft()
                batch.append(item)
                size += len(item[0].document)
                cost += self._costs.popleft()
            return batch, cost

    def _run(self) -> None:
        """Compressing stage: batches in, prepared batches out, in order."""
        try:
            while (taken := self._take_batch()) is not None:
                batch, cost = taken
                self._prepared.put((batch, cost, *self._prepare(batch)))
        except BaseException as exc:  # a bug: stop acking, let the server exit
            log.exception("the writer failed; no further records will be acknowledged")
            self._on_fatal(exc)
        finally:
            self._pool.shutdown(wait=False)
            self.compressor.close()
            self._prepared.put(None)  # the committing stage ends after the last batch

    def _run_commits(self) -> None:
        """Committing stage: one durable transaction per prepared batch."""
        try:
            while (item := self._prepared.get()) is not None:
                batch, cost, prepared, new_dict = item
                results = self._write(batch, prepared, new_dict)
                if results is None:
                    continue  # shutting down with the disk still full: unacked
                if new_dict is not None:
                    self._on_dict(*new_dict)  # durable now: spiders may compress with it (6.7)
                # Freed before the loop hears of the commit, so that it sees
                # the room when it wakes the connections waiting for some.
                with self._cond:
                    self.backlog_bytes -= cost
                self._on_commit(results)
        except BaseException as exc:
            log.exception("the writer failed; no further records will be acknowledged")
            self._on_fatal(exc)

    def _prepare(self, batch: list[tuple[Record, Any]]) -> tuple[list[Prepared | None], tuple[int, bytes] | None]:
        """Each record's Prepared (None: a spider's frame that does not
        decompress, refused), and the dictionary trained meanwhile."""
        comp = self.compressor
        new_dict = comp.take_new_dict()
        if new_dict is not None:
            comp.use_dict(*new_dict)
        now = time.time()
        docs = self._documents(batch)
        heads = [r.packed.head_len if r.packed is not None else L.head_length(r.document) for r, _ in batch]
        # Fingerprints are computed on a pool while zstd compresses the batch
        # in its own threads: hashlib, lexbor, numpy and zstd release the GIL.
        # One task per thread's slice of the batch, not per page: a future
        # and its hand-offs cost about what a page's SHA-256 does. A frame a
        # spider compressed comes with its body hash (6.7): nothing to do.
        if self.dedup:
            whole = [i for i, d in enumerate(docs) if d is not None]
            items = [(batch[i][0].url, batch[i][0].http, docs[i], heads[i]) for i in whole]
            step = max(1, -(-len(items) // FINGERPRINT_THREADS))
            parts = [self._pool.submit(fingerprint_records, items[k : k + step], near=self.near_dups,
                                       store_format=self.store.format) for k in range(0, len(items), step)]
        raw = [i for i, (r, _) in enumerate(batch) if r.packed is None]
        dict_id, frames = comp.compress_many([batch[i][0].document for i in raw])
        payloads = dict(zip(raw, frames))
        fps: list[L.Fingerprint | None] = [None] * len(batch)
        if self.dedup:
            for i, fp in zip(whole, (fp for part in parts for fp in part.result())):
                fps[i] = fp
        prepared: list[Prepared | None] = []
        for i, (r, _) in enumerate(batch):
            p = r.packed
            if p is not None and docs[i] is None and self.needs_documents:
                prepared.append(None)  # its frame did not decompress (_documents)
                continue
            if p is None:
                d_id, doc_len, payload = dict_id, len(r.document), payloads[i]
            else:  # written as it came (6.7)
                d_id, doc_len, payload = p.dict_id, p.doc_len, r.document
                if self.dedup and docs[i] is None:
                    fps[i] = fingerprint_packed(r.url, r.http, p)
            value = L.encode_doc(r.doc_id, r.success, int(r.specific), r.http, r.ms, r.url, r.new_url,
                                 doc_len, heads[i], now, d_id, payload)
            extra = self._document_hooks(r, docs[i], heads[i]) if self.plugins is not None else None
            prepared.append(Prepared(r.doc_id, r.url, value, doc_len, fingerprint=fps[i], extra=extra,
                                     not_modified=r.specific == Specific.NOT_MODIFIED, fetch=fetch_value(r)))
        return prepared, new_dict

    @property
    def needs_documents(self) -> bool:
        """Whether the writer reads documents beyond their body hash: the
        simhash of --near-dups, the document hooks of --plugin."""
        return (self.dedup and self.near_dups) or self.plugins is not None

    def _documents(self, batch: list[tuple[Record, Any]]) -> list[bytes | None]:
        """Each record's document, where the writer needs it: a spider's
        frame (6.7) is decompressed only for needs_documents, else None; a
        frame that does not decompress to its doc_len is None, logged once."""
        docs: list[bytes | None] = []
        for r, _ in batch:
            if r.packed is None:
                docs.append(r.document)
            elif not self.needs_documents:
                docs.append(None)
            else:
                try:
                    docs.append(self.frames.decompress(r))
                except CorruptDocument as exc:
                    log.error("event=frame_refused doc=%d reason=%r: not stored", r.doc_id, str(exc))
                    docs.append(None)
        return docs

    def _document_hooks(self, r: Record, document: bytes, head_len: int) -> bytes | None:
        """The plugins' document metadata (JSON), computed before the commit
        so it is stored, and acked, with the document itself."""
        head = document[:head_len]
        meta = {
            "doc_id": r.doc_id, "url": r.url, "new_url": r.new_url, "success": r.success,
            "http_code": http_code(r.http) or 0, "content_type": content_type(head),
            "headers": head.decode("iso-8859-1"),
        }  # fmt: skip
        return self.plugins.document(meta, document[head_len:])

    def _clear_stale_readers(self) -> None:
        """Before each commit: free the reader slots of processes that died
        mid-read (kill -9 of wreck-dump). A dead reader keeps the snapshot it
        read, so LMDB could reuse no page freed after it and the file would
        grow with every commit; its slot would stay taken too. The check
        scans the reader table: about 5 us, against a commit's fsync."""
        cleared = self.store.clear_stale_readers()
        if cleared:
            log.info("cleared %d stale LMDB reader(s): a reader died mid-read", cleared)

    def _write(self, batch: list[tuple[Record, Any]], prepared: list[Prepared | None],
               new_dict: tuple[int, bytes] | None) -> Results | None:
        self._clear_stale_readers()
        delay = S.RETRY_FIRST_S
        crawl = self.crawl_to_keep
        kept = [p for p in prepared if p is not None]
        while True:
            try:
                committed = iter(self.store.commit(kept, new_dict, crawl_id=crawl))
                break
            except lmdb.MapFullError:
                size = self.store.grow()
                log.info("LMDB map full: grown to %d MiB, retrying the batch", size >> 20)
            except lmdb.Error as exc:
                if not self.full:
                    self.full = True
                    log.error("cannot commit (%s): holding acks and retrying until space returns", exc)
                    self._on_full(True, f"store cannot commit: {exc}")
                with self._cond:
                    if self._stopping and delay >= S.RETRY_MAX_S:
                        return None  # shutting down and still full: these stay unacked
                time.sleep(delay)
                delay = min(delay * 2, S.RETRY_MAX_S)
        results = [next(committed) if p is not None else None for p in prepared]
        if crawl and self.crawl_to_keep == crawl:
            self.crawl_to_keep = ""  # kept: later commits need not write it again
        if self.full:
            self.full = False
            log.warning("commits succeed again: resuming acks")
            self._on_full(False, "store commits again")
        self.batches += 1
        refused = [r for (r, _), res in zip(batch, results) if res is AckResult.REFUSED]
        if refused:  # one line per batch, whatever the number of records
            log.error("refused %d record(s) whose doc id holds another URL in this store (doc %d: sent %s); "
                      "a store belongs to one crawl: give this crawl its own --data", len(refused),
                      refused[0].doc_id, refused[0].url)
        return [(reply_to, r.doc_id, res) for (r, reply_to), res in zip(batch, results)]
