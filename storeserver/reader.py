# The store's public read API: what other programs may use. Everything else
# in storeserver/ (key layouts, the writer, compression) may change between
# versions; the names below keep their meaning. Reading is safe while a
# storeserver writes: LMDB readers never block the writer, nor it them
# (a read sees the last committed batch).
#
#   read_counters(DIR)   documents, raw and stored bytes, 304 revisits
#   read_crawl_id(DIR)   the crawl whose records the store keeps (6.1)
#   open_store(DIR)      a ReadStore: documents by doc id or URL, in order
#   open_crawl(DIR)      a Crawl: Documents with status, type, fetch time,
#                        title, text, digest; filters; lookup by URL
#                        (storeserver/documents.py, docs/reading.md)
#   open_stores(DIRS)    the shards of one crawl (docs/protocol.txt: doc id D
#                        in store D mod n) read as one store: the same API,
#                        doc order across shards, a URL looked up in each
#   stores_of(MANIFEST)  the store directories a crawl manifest names (the
#                        urlserver's DATA/crawl.json, wreck/manifest.py)
#
# DIR is the storeserver's --data (the store keeps its files beneath it).
# Every failure is a StoreError (NotFound for a missing document).
"""The public read API of the store: counters and documents."""

from __future__ import annotations

from pathlib import Path

import lmdb
import msgspec

from wreck import manifest

from .documents import Crawl, Document, open_crawl, payload_digest
from .layout import META_CRAWL, StoredDoc
from .shards import ShardedStore, open_shards
from .store import META_DOCS, META_NOT_MODIFIED, META_RAW, META_STORED, NotFound, ReadStore, StoreError

__all__ = ["Counters", "Crawl", "Document", "NotFound", "ReadStore", "ShardedStore", "StoreError", "StoredDoc",
           "open_crawl", "open_store", "open_stores", "payload_digest", "read_counters", "read_crawl_id", "stores_of"]


class Counters(msgspec.Struct, frozen=True):
    """What a store holds, as of its last commit."""

    docs: int = 0  # documents stored (duplicates and 304 revisits not counted)
    raw_bytes: int = 0  # their uncompressed bytes (headers and body)
    stored_bytes: int = 0  # their compressed bytes on disk
    not_modified: int = 0  # 304 revisit records (a header block, no new body)


def open_store(data: Path) -> ReadStore:
    """A reader of the store in `data`; close() it when done.

    Raises StoreError if there is no store there or it cannot be opened.
    """
    try:
        return ReadStore(Path(data))
    except OSError as exc:
        raise StoreError(f"cannot open the store in {data}: {exc}") from None


def _meta(data: Path) -> dict[str, object]:
    reader = open_store(data)
    try:
        return reader.meta_info()
    except lmdb.Error as exc:  # translated here: callers see one vocabulary
        raise StoreError(f"cannot read the store in {data}: {exc}") from None
    finally:
        reader.close()


def read_crawl_id(data: Path) -> str:
    """The id of the crawl whose records the store in `data` keeps
    (docs/protocol.txt 6.1); "" if it keeps none yet.

    Raises StoreError if there is no store there (yet) or it cannot be read.
    """
    return str(_meta(data).get(META_CRAWL.decode(), ""))


def read_counters(data: Path) -> Counters:
    """The counters of the store in `data`.

    Raises StoreError if there is no store there (yet) or it cannot be read.
    """
    info = _meta(data)
    return Counters(**{key.decode(): int(info.get(key.decode(), 0))
                       for key in (META_DOCS, META_RAW, META_STORED, META_NOT_MODIFIED)})


def open_stores(dirs: list[Path]) -> ShardedStore:
    """The stores in `dirs` (shard order: the urlserver's --store order) read
    as one store; close() it when done.

    Raises StoreError if one cannot be opened or they keep different crawls.
    """
    try:
        return open_shards(dirs)
    except OSError as exc:
        raise StoreError(f"cannot open the stores {', '.join(map(str, dirs))}: {exc}") from None


def stores_of(path: Path) -> list[Path]:
    """The store directories, in shard order, that the crawl manifest in
    `path` (a crawl.json or the urlserver's --data holding one) names.

    Raises StoreError if it cannot be read or names no directories (stores
    on other boxes: give their copied directories instead).
    """
    try:
        found = manifest.read(Path(path))
    except manifest.ManifestError as exc:
        raise StoreError(str(exc)) from None
    if not found.store_data:
        raise StoreError(f"the manifest {path} names the stores {', '.join(found.stores)} but not their "
                         "directories (they run on other boxes): give each store's directory with --data")
    return [Path(d) for d in found.store_data]
