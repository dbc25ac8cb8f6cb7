"""Store format 3 keys page bodies by SHA-256 (the CPU's SHA extensions make
it about twice as fast as BLAKE2b, issue 16); a format 2 store made by an
older version is written on as format 2, so a resumed crawl's new pages are
still marked as copies of its old ones."""

from __future__ import annotations

import hashlib

import lmdb

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver import layout as L
from wreck.storeserver.committer import Committer
from wreck.storeserver.compress import Compressor
from wreck.storeserver.settings import MAX_MAP_GROWTH
from wreck.storeserver.store import ReadStore, WriteStore, store_path

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
BODY = b"<html><body><p>" + b"the same page on two URLs " * 40 + b"</p></body></html>"


def _store_pages(data, pages: list[tuple[int, str]]) -> None:
    """Commit `pages` (doc id, URL; each with BODY) the way the server's writer does."""
    store = WriteStore(data, map_size=1 << 24, max_growth=MAX_MAP_GROWTH)
    comp = Compressor(level=3, dict_size=1 << 16, train_docs=0, sample_bytes=1024)
    done: list = []
    writer = Committer(store, comp, window_s=0, on_commit=done.extend, on_full=lambda *a: None,
                       on_fatal=lambda exc: done.append(exc))
    writer.start()
    for doc_id, url in pages:
        writer.submit(Record(doc_id, True, Specific.OK, http_enum(200), 5, url, None, HEAD + BODY), None)
    assert writer.stop(30) and len(done) == len(pages)
    store.close()


def _marks(data) -> dict[int, dict]:
    reader = ReadStore(data)
    try:
        return {doc_id: reader.annotations(doc_id) for doc_id in (1, 2)} | {0: reader.meta_info()}
    finally:
        reader.close()


def test_a_new_store_is_format_3_and_keys_bodies_by_sha256(tmp_path):
    _store_pages(tmp_path, [(1, "http://a.test/1"), (2, "http://a.test/2")])
    marks = _marks(tmp_path)
    assert marks[0]["format"] == "3"
    assert marks[1]["body_hash"] == hashlib.sha256(BODY).hexdigest()[:32]
    assert marks[2]["duplicate_of"] == 1


def test_a_format_2_store_is_written_on_as_format_2_and_still_finds_its_old_copies(tmp_path):
    _store_pages(tmp_path, [(1, "http://a.test/1")])
    env = lmdb.open(str(store_path(tmp_path)), max_dbs=16)  # as an older version left it
    with env.begin(write=True) as txn:
        meta, bodies, fprints = (env.open_db(name, txn=txn) for name in (L.DB_META, L.DB_BODIES, L.DB_FPRINTS))
        txn.put(L.META_FORMAT, b"2", db=meta)
        old = hashlib.blake2b(BODY, digest_size=16).digest()
        txn.drop(bodies, delete=False)
        txn.put(old, L.DOC_KEY.pack(1), db=bodies)
        flags, dist, pad, sim, dup_of, near_of, _ = L.FPRINT.unpack(txn.get(L.DOC_KEY.pack(1), db=fprints))
        txn.put(L.DOC_KEY.pack(1), L.FPRINT.pack(flags, dist, pad, sim, dup_of, near_of, old), db=fprints)
    env.close()
    _store_pages(tmp_path, [(2, "http://a.test/2")])  # the crawl resumed by this version
    marks = _marks(tmp_path)
    assert marks[0]["format"] == "2"
    assert marks[2]["duplicate_of"] == 1 and marks[2]["body_hash"] == old.hex()
