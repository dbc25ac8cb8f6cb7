# The LMDB environment under DIR/store/: opening it (stale readers cleared),
# the one write path (a batch of ready values in one transaction, grown and
# retried when the map is full) and the read API wreck-dump uses.
#
# Only the writer thread of a storeserver writes; any number of processes
# read at once (LMDB's MVCC: readers never block the writer, nor it them).
# A reader whose map is smaller than the writer's grown one adopts the new
# size on MapResizedError and retries. Long dumps use a fresh read
# transaction per chunk, so they never pin old pages for the whole dump.
"""LMDB open/grow/commit, and reads."""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator
from pathlib import Path

import lmdb
import msgspec

from wreck.protocol import AckResult, Specific
from wreck.lmdbformat import FormatError, check_marker, check_readonly, check_size
from wreck.private import private_dir, private_files

from . import dedup
from . import layout as L
from .compress import Decompressors

STORE_SUBDIR = "store"  # DIR/store/ holds data.mdb and lock.mdb
MAX_DBS = 16  # the eight named databases, with room for a few more
COUNTER = struct.Struct("!Q")
META_DOCS = b"docs"  # documents stored (duplicates and not-modified revisits not counted)
META_RAW = b"raw_bytes"  # their uncompressed document bytes
META_STORED = b"stored_bytes"  # their compressed bytes
META_NOT_MODIFIED = b"not_modified"  # 304 revisit records: a header block, no new body
_COUNTERS = (META_DOCS, META_RAW, META_STORED, META_NOT_MODIFIED)
READ_CHUNK = 1000  # documents per read transaction when iterating
_BINARY_META = (L.META_SEQ, L.META_EXPORTED, L.META_WARC_POS)


class StoreError(Exception):
    """The store cannot be opened or read (wrong directory, newer format...)."""


class NotFound(StoreError):
    """No document with that doc id or URL."""


def store_path(data: Path) -> Path:
    return Path(data) / STORE_SUBDIR


class Prepared:
    """One document ready to commit: its key, URL index key and value."""

    __slots__ = ("doc_id", "url", "key", "url_key", "value", "raw_len", "fingerprint", "extra", "not_modified",
                 "fetch")

    def __init__(self, doc_id: int, url: str, value: bytes, raw_len: int, *,
                 fingerprint: L.Fingerprint | None = None, extra: bytes | None = None,
                 not_modified: bool = False, fetch: bytes | None = None) -> None:
        self.doc_id = doc_id
        self.url = url
        self.key = L.DOC_KEY.pack(doc_id)
        self.url_key = L.url_key(url)
        self.value = value
        self.raw_len = raw_len
        self.fingerprint = fingerprint  # None: not a page (dedup.fingerprint_record)
        self.extra = extra  # JSON object from document hooks, or None
        self.not_modified = not_modified  # a 304: counted apart, never the URL's current document
        self.fetch = fetch  # layout.encode_fetch(...) of what the spider kept for the archive, or None


class WriteStore:
    """The writer's side. Use from one thread only."""

    def __init__(self, data: Path, *, map_size: int, max_growth: int,
                 near_distance: int = dedup.DEFAULT_DISTANCE) -> None:
        path = private_dir(store_path(data))  # 0700, and its files 0600: pages are private
        fresh = not (path / "data.mdb").exists()
        self.path = path
        self.max_growth = max_growth
        # sync=True, metasync=True: a commit returns only once it is on disk.
        # writemap stays off: with it, a full disk surfaces as SIGBUS, not
        # as an error the server can hold acks on and recover from.
        try:
            self.env = lmdb.open(
                str(path), map_size=map_size, max_dbs=MAX_DBS, subdir=True,
                sync=True, metasync=True, writemap=False, readahead=False, mode=0o600,
            )  # fmt: skip
        except lmdb.Error as exc:  # not a directory, no permission, no space: the operator's to fix
            raise StoreError(f"cannot open the store: {exc}") from None
        if fresh:
            private_files(path / "data.mdb", path / "lock.mdb")
        try:  # before any page is read through the map, or a named database created
            check_size(self.env, str(path))
            check_marker(self.env, str(path), "storeserver")
        except FormatError as exc:
            self.env.close()
            raise StoreError(str(exc)) from None
        self.stale_readers_cleared = self.env.reader_check()
        self.docs = self.env.open_db(L.DB_DOCS)
        self.urls = self.env.open_db(L.DB_URLS, dupsort=True, dupfixed=True)
        self.meta = self.env.open_db(L.DB_META)
        self.dicts = self.env.open_db(L.DB_DICTS)
        self.dedup = dedup.DupIndex(self.env, max_distance=near_distance)
        self.extra = self.env.open_db(L.DB_EXTRA)
        self.fetch = self.env.open_db(L.DB_FETCH)
        self.journal = self.env.open_db(L.DB_JOURNAL)
        with self.env.begin(write=True) as txn:
            found = txn.get(L.META_FORMAT, db=self.meta)
            if found is None:
                txn.put(L.META_FORMAT, str(L.FORMAT_VERSION).encode(), db=self.meta)
                txn.put(L.META_CREATED, repr(time.time()).encode(), db=self.meta)
            elif int(found) not in L.WRITABLE_FORMATS:
                raise StoreError(f"{path} holds store format {found.decode()}, this server writes "
                                 f"{' and '.join(map(str, L.WRITABLE_FORMATS))} (read it with wreck-dump; "
                                 f"crawl on into a new --data)")
            # The format this store is written in: a format 2 store stays one
            # (its body hashes are BLAKE2b: layout.body_key), a new one is the latest.
            self.format = int(found) if found is not None else L.FORMAT_VERSION
            crawl = txn.get(L.META_CRAWL, db=self.meta)
            seq = txn.get(L.META_SEQ, db=self.meta)
            # The committed counters, kept in memory after each commit: read by the status
            # listener without a transaction of its own (a map resize needs none open).
            self.totals = {name.decode(): COUNTER.unpack(value)[0] if (value := txn.get(name, db=self.meta)) else 0
                           for name in _COUNTERS}
        # The crawl whose records this store keeps ("" until a spider names one, 6.1).
        self.crawl_id = crawl.decode("ascii") if crawl is not None else ""
        self.seq = L.JOURNAL_KEY.unpack(seq)[0] if seq else 0  # the last commit sequence given

    def clear_stale_readers(self) -> int:
        """Free the reader slots of processes that died mid-read; how many."""
        return self.env.reader_check()

    @property
    def map_size(self) -> int:
        return self.env.info()["map_size"]

    def current_dict(self) -> tuple[int, bytes | None]:
        with self.env.begin() as txn:
            raw = txn.get(L.META_DICT, db=self.meta)
            if raw is None:
                return L.NO_DICT, None
            dict_id = L.DICT_KEY.unpack(raw)[0]
            return dict_id, txn.get(raw, db=self.dicts)

    def commit(self, batch: list[Prepared], new_dict: tuple[int, bytes] | None = None, *,
               crawl_id: str = "") -> list[AckResult]:
        """Write `batch` in one durable transaction; one result per entry.
        A `crawl_id` given is kept as the store's crawl in the same transaction,
        so the store names a crawl exactly when it holds that crawl's records.

        Raises lmdb.MapFullError (nothing written: grow() and retry) or
        another lmdb.Error (e.g. the disk is full: nothing written).
        """
        results = []
        added = raw = stored = revisits = 0
        seq = self.seq
        with self.env.begin(write=True) as txn:
            if crawl_id:
                txn.put(L.META_CRAWL, crawl_id.encode("ascii"), db=self.meta)
            if new_dict is not None:
                key = L.DICT_KEY.pack(new_dict[0])
                txn.put(key, new_dict[1], db=self.dicts)
                txn.put(L.META_DICT, key, db=self.meta)
            for p in batch:
                if txn.put(p.key, p.value, overwrite=False, db=self.docs):
                    txn.put(p.url_key, p.key, dupdata=True, db=self.urls)
                    if p.fingerprint is not None:
                        self.dedup.mark(txn, p.doc_id, p.fingerprint)
                    if p.extra is not None:
                        txn.put(p.key, p.extra, db=self.extra)
                    if p.fetch is not None:
                        txn.put(p.key, p.fetch, db=self.fetch)
                    seq += 1
                    txn.put(L.JOURNAL_KEY.pack(seq), p.key, db=self.journal)
                    results.append(AckResult.STORED)
                    if p.not_modified:
                        revisits += 1
                        continue
                    added += 1
                    raw += p.raw_len
                    stored += len(p.value)
                elif L.doc_url(txn.get(p.key, db=self.docs)) == p.url:
                    results.append(AckResult.DUPLICATE)  # a resend: the first record stands
                else:
                    # The doc id holds another URL: a store of another crawl
                    # (doc ids restart at 1) or a forged record. Neither is a
                    # duplicate; the spider must hear that nothing was stored.
                    results.append(AckResult.REFUSED)
            if added or revisits:
                for name, n in ((META_DOCS, added), (META_RAW, raw), (META_STORED, stored),
                                (META_NOT_MODIFIED, revisits)):
                    if not n:
                        continue
                    old = txn.get(name, db=self.meta)
                    txn.put(name, COUNTER.pack((COUNTER.unpack(old)[0] if old else 0) + n), db=self.meta)
                txn.put(L.META_SEQ, L.JOURNAL_KEY.pack(seq), db=self.meta)
        self.seq = seq  # only once the transaction committed
        for name, n in ((META_DOCS, added), (META_RAW, raw), (META_STORED, stored), (META_NOT_MODIFIED, revisits)):
            self.totals[name.decode()] += n  # committed: the transaction above did not raise
        return results

    def put_meta(self, key: bytes, value: bytes) -> None:
        """One durable meta value in its own transaction (the WARC writer's position)."""
        with self.env.begin(write=True) as txn:
            txn.put(key, value, db=self.meta)

    def grow(self) -> int:
        """Double the map (no transaction may be open). Returns the new size."""
        new = min(self.map_size * 2, self.map_size + self.max_growth)
        self.env.set_mapsize(new)
        return new

    def close(self) -> None:
        self.env.close()


def record_position(data: Path, key: bytes, seq: int) -> None:
    """Keep journal sequence `seq` in the store's meta under `key` (where
    wreck-dump --since-last-export ended). Safe beside a running server:
    LMDB serializes writers across processes. The caller holds no other
    environment of this store open (one per path and process)."""
    try:
        env = lmdb.open(str(store_path(data)), max_dbs=MAX_DBS, subdir=True, sync=True, metasync=True)
    except lmdb.Error as exc:
        raise StoreError(f"cannot open the store in {store_path(data)} to record the export: {exc}") from None
    try:
        with env.begin(write=True) as txn:
            txn.put(key, L.JOURNAL_KEY.pack(seq), db=env.open_db(L.DB_META, txn=txn, create=False))
    finally:
        env.close()


class ReadStore:
    """A reader: wreck-dump, tests. Safe while a server writes."""

    def __init__(self, data: Path) -> None:
        path = store_path(data)
        if not (path / "data.mdb").exists():
            raise StoreError(f"no store in {data} (expected {path}/data.mdb)")
        try:
            self.env = lmdb.open(str(path), readonly=True, lock=True, max_dbs=MAX_DBS, subdir=True)
            check_size(self.env, str(path))
            check_readonly(self.env, str(path), "storeserver")
            self._bind(path)
        except FormatError as exc:
            self.env.close()
            raise StoreError(str(exc)) from None
        except lmdb.Error as exc:
            raise StoreError(f"cannot open the store in {path}: {exc}") from None

    @classmethod
    def beside(cls, writer: WriteStore) -> ReadStore:
        """A reader on the writer's own environment, for another thread of the
        server (the --warc-dir writer): LMDB allows one environment per path
        and process, and read transactions never block the writer."""
        self = cls.__new__(cls)
        self.env = writer.env
        self._bind(writer.path)
        self._borrowed = True  # close() leaves the writer's environment open
        return self

    def _bind(self, path: Path) -> None:
        """Open the named databases; refuse a format this reader does not know."""
        self.docs = self.env.open_db(L.DB_DOCS, create=False)
        self.urls = self.env.open_db(L.DB_URLS, create=False, dupsort=True, dupfixed=True)
        self.meta = self.env.open_db(L.DB_META, create=False)
        self.dicts = self.env.open_db(L.DB_DICTS, create=False)
        self.fprints = self._optional_db(L.DB_FPRINTS)
        self.extra = self._optional_db(L.DB_EXTRA)
        self.fetch = self._optional_db(L.DB_FETCH)  # format 2
        self.journal = self._optional_db(L.DB_JOURNAL)
        with self.env.begin() as txn:
            found = txn.get(L.META_FORMAT, db=self.meta)
        if found is not None and int(found) not in L.READABLE_FORMATS:
            self.env.close()
            raise StoreError(f"{path} holds store format {found.decode()}, this reader knows "
                             f"{', '.join(map(str, L.READABLE_FORMATS))}: use a newer wreck-dump")
        self._dec = Decompressors(self._load_dict)

    _borrowed = False

    def _optional_db(self, name: bytes):
        """A database older stores lack (fingerprints, plugin metadata), or None."""
        try:
            return self.env.open_db(name, create=False)
        except lmdb.NotFoundError:
            return None

    def close(self) -> None:
        if not self._borrowed:
            self.env.close()

    def annotations(self, doc_id: int) -> dict:
        """Duplicate marks and plugin metadata of `doc_id` (empty if none)."""
        out: dict = {}
        with self._txn() as txn:
            if self.fprints is not None:
                out.update(dedup.read(txn, self.fprints, doc_id) or {})
            raw = txn.get(L.DOC_KEY.pack(doc_id), db=self.extra) if self.extra is not None else None
            if raw is not None:
                out["extra"] = msgspec.json.decode(raw)
        return out

    def _txn(self) -> lmdb.Transaction:
        try:
            return self.env.begin()
        except lmdb.MapResizedError:
            self.env.set_mapsize(0)  # adopt the writer's grown map
            return self.env.begin()

    def _load_dict(self, dict_id: int) -> bytes | None:
        with self._txn() as txn:
            return txn.get(L.DICT_KEY.pack(dict_id), db=self.dicts)

    def meta_info(self) -> dict[str, object]:
        """Crawl-level metadata: format, created, counters, dictionary id."""
        out: dict[str, object] = {}
        with self._txn() as txn:
            for key, value in txn.cursor(db=self.meta):
                if key in _BINARY_META:
                    continue  # positions, read by their own methods
                if key in _COUNTERS:
                    out[key.decode()] = COUNTER.unpack(value)[0]
                elif key == L.META_DICT:
                    out[key.decode()] = L.DICT_KEY.unpack(value)[0]
                else:
                    out[key.decode()] = value.decode("utf-8", "replace")
        return out

    def _decode(self, doc_id: int, value: bytes) -> tuple[L.StoredDoc, bytes]:
        meta, payload = L.decode_doc(doc_id, value)
        document = self._dec.decompress(meta.dict_id, payload, meta.doc_len, what=f"document {doc_id}")
        return meta, document

    def has(self, doc_id: int) -> bool:
        """Whether `doc_id` is stored here (nothing decompressed)."""
        with self._txn() as txn:
            return txn.get(L.DOC_KEY.pack(doc_id), db=self.docs) is not None

    def get(self, doc_id: int) -> tuple[L.StoredDoc, bytes]:
        """Metadata and document of `doc_id`; NotFound if absent."""
        with self._txn() as txn:
            value = txn.get(L.DOC_KEY.pack(doc_id), db=self.docs)
            if value is None:
                raise NotFound(f"no document with doc id {doc_id}")
            return self._decode(doc_id, value)

    def doc_ids_for_url(self, url: str) -> list[int]:
        """Every doc id stored for `url`, in doc order."""
        found = []
        with self._txn() as txn:
            cur = txn.cursor(db=self.urls)
            if cur.set_key(L.url_key(url)):
                for key in cur.iternext_dup():
                    value = txn.get(key, db=self.docs)
                    if value is not None and L.decode_doc(0, value)[0].url == url:  # hash collisions: check
                        found.append(L.DOC_KEY.unpack(key)[0])
        return sorted(found)

    def current_doc_for_url(self, url: str) -> int | None:
        """The doc id that holds `url`'s current content: the latest one that
        is not a 304 revisit record (a 304 says the earlier one still holds)."""
        found = self.doc_ids_for_url(url)
        with self._txn() as txn:
            for doc_id in reversed(found):
                meta = L.decode_doc(doc_id, txn.get(L.DOC_KEY.pack(doc_id), db=self.docs))[0]
                if meta.specific != Specific.NOT_MODIFIED:
                    return doc_id
        return found[-1] if found else None

    def iter_docs(self, *, with_documents: bool = True, after_id: int = 0) -> Iterator[tuple[L.StoredDoc, bytes | None]]:
        """Every document in doc order (those after doc id `after_id`), READ_CHUNK per read transaction."""
        after: bytes | None = L.DOC_KEY.pack(after_id) if after_id else None
        while True:
            chunk = []
            with self._txn() as txn:
                cur = txn.cursor(db=self.docs)
                positioned = cur.set_range(after) if after is not None else cur.first()
                if positioned and after is not None and cur.key() == after:
                    positioned = cur.next()
                while positioned and len(chunk) < READ_CHUNK:
                    chunk.append((cur.key(), cur.value()))
                    positioned = cur.next()
            if not chunk:
                return
            for key, value in chunk:
                doc_id = L.DOC_KEY.unpack(key)[0]
                if with_documents:
                    yield self._decode(doc_id, value)
                else:
                    yield L.decode_doc(doc_id, value)[0], None
            after = chunk[-1][0]

    def fetch_info(self, doc_id: int) -> L.FetchInfo | None:
        """What the spider kept about `doc_id`'s fetch for the archive, or None."""
        if self.fetch is None:
            return None
        with self._txn() as txn:
            raw = txn.get(L.DOC_KEY.pack(doc_id), db=self.fetch)
        return L.decode_fetch(raw) if raw is not None else None

    def meta_value(self, key: bytes) -> bytes | None:
        with self._txn() as txn:
            return txn.get(key, db=self.meta)

    def position(self, key: bytes) -> int:
        """A journal sequence kept in meta under `key` (0: none)."""
        raw = self.meta_value(key)
        return L.JOURNAL_KEY.unpack(raw)[0] if raw else 0

    def last_seq(self) -> int:
        """The last commit sequence given (0: none; a format 1 store: its doc count)."""
        if self.journal is None:
            return sum(1 for _ in self.iter_docs(with_documents=False))
        return self.position(L.META_SEQ)

    def iter_journal(self, after: int = 0, upto: int | None = None) -> Iterator[tuple[int, int]]:
        """(seq, doc_id) of every doc committed after sequence `after` (up to
        `upto`), in commit order, READ_CHUNK per read transaction. A format 1
        store has no journal: its docs come in doc order, numbered from 1."""
        if self.journal is None:
            for n, (meta, _) in enumerate(self.iter_docs(with_documents=False), 1):
                if n > after and (upto is None or n <= upto):
                    yield n, meta.doc_id
            return
        pos = after
        while True:
            chunk = []
            with self._txn() as txn:
                cur = txn.cursor(db=self.journal)
                positioned = cur.set_range(L.JOURNAL_KEY.pack(pos + 1))
                while positioned and len(chunk) < READ_CHUNK:
                    seq = L.JOURNAL_KEY.unpack(cur.key())[0]
                    if upto is not None and seq > upto:
                        break
                    chunk.append((seq, L.DOC_KEY.unpack(cur.value())[0]))
                    positioned = cur.next()
            if not chunk:
                return
            yield from chunk
            pos = chunk[-1][0]

    def meta_of(self, doc_id: int) -> L.StoredDoc:
        """Metadata of `doc_id` without decompressing its document; NotFound if absent."""
        with self._txn() as txn:
            value = txn.get(L.DOC_KEY.pack(doc_id), db=self.docs)
            if value is None:
                raise NotFound(f"no document with doc id {doc_id}")
            return L.decode_doc(doc_id, value)[0]

    def duplicate_of(self, doc_id: int) -> int | None:
        """The earlier doc with the same body, when dedup marked `doc_id` an exact duplicate."""
        if self.fprints is None:
            return None
        with self._txn() as txn:
            marks = dedup.read(txn, self.fprints, doc_id)
        return marks["duplicate_of"] if marks else None
