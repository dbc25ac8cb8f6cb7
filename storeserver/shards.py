# A crawl spread over several stores, read as one. docs/protocol.txt puts
# doc id D in store D mod n (n stores, in the urlserver's --store order), and
# one urlserver numbers every document of the crawl, so the shards' doc ids
# are disjoint: doc order is a k-way merge of the shards' own doc orders
# (heapq.merge, one read chunk per shard held at a time), a doc id is looked
# up in its shard (D mod n, then the others, for shards given out of order),
# and a URL's documents are the union of every shard's (a URL fetched twice
# may be stored in two shards: each fetch is a new doc id).
#
# The shards must keep one crawl: stores with different crawl ids (6.1) are
# refused at open, since merging two crawls' doc ids would interleave
# unrelated documents.
"""Several stores of one crawl, read as one store."""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from pathlib import Path

from .layout import META_CRAWL, StoredDoc
from .store import META_DOCS, META_NOT_MODIFIED, META_RAW, META_STORED, NotFound, ReadStore, StoreError

COUNTER_KEYS = tuple(key.decode() for key in (META_DOCS, META_RAW, META_STORED, META_NOT_MODIFIED))


class ShardedStore:
    """The stores of one crawl, in shard order, with ReadStore's read API."""

    def __init__(self, stores: Sequence[ReadStore], names: Sequence[str]) -> None:
        self.stores, self.names = list(stores), list(names)
        crawls = {name: str(s.meta_info().get(META_CRAWL.decode(), "")) for name, s in zip(names, stores)}
        kept = {crawl for crawl in crawls.values() if crawl}
        if len(kept) > 1:
            listed = ", ".join(f"{name}: crawl {crawl or 'none'}" for name, crawl in crawls.items())
            raise StoreError(f"these stores keep different crawls ({listed}); read one crawl's stores together")

    def close(self) -> None:
        for store in self.stores:
            store.close()

    def _order(self, doc_id: int) -> list[ReadStore]:
        """The shards to try for `doc_id`: its own (D mod n) first."""
        own = doc_id % len(self.stores)
        return [self.stores[own], *self.stores[:own], *self.stores[own + 1:]]

    def holder(self, doc_id: int) -> ReadStore:
        """The shard that holds `doc_id`; NotFound if none does."""
        for store in self._order(doc_id):
            if store.has(doc_id):
                return store
        raise NotFound(f"no document with doc id {doc_id} in any of {len(self.stores)} stores")

    def get(self, doc_id: int) -> tuple[StoredDoc, bytes]:
        """Metadata and document of `doc_id`; NotFound if absent."""
        return self.holder(doc_id).get(doc_id)

    def annotations(self, doc_id: int) -> dict:
        """Duplicate marks and plugin metadata of `doc_id` (empty if none)."""
        try:
            return self.holder(doc_id).annotations(doc_id)
        except NotFound:
            return {}

    def doc_ids_for_url(self, url: str) -> list[int]:
        """Every doc id stored for `url` in any shard, in doc order."""
        return sorted(d for store in self.stores for d in store.doc_ids_for_url(url))

    def current_doc_for_url(self, url: str) -> int | None:
        """The latest doc id of `url` that is not a 304 revisit, across shards."""
        found = [(d, s) for s in self.stores for d in [s.current_doc_for_url(url)] if d is not None]
        return max(found, key=lambda pair: pair[0])[0] if found else None

    def iter_docs(self, *, with_documents: bool = True) -> Iterator[tuple[StoredDoc, bytes | None]]:
        """Every document of every shard, in doc order."""
        return heapq.merge(*(s.iter_docs(with_documents=with_documents) for s in self.stores),
                           key=lambda doc: doc[0].doc_id)

    def fetch_info(self, doc_id: int):
        """What the spider kept about `doc_id`'s fetch (the WARC's request, IP, outlinks), or None."""
        return self.holder(doc_id).fetch_info(doc_id)

    def meta_of(self, doc_id: int) -> StoredDoc:
        """Metadata of `doc_id` without its document; NotFound if absent."""
        return self.holder(doc_id).meta_of(doc_id)

    def duplicate_of(self, doc_id: int) -> int | None:
        """The earlier doc of its shard with the same body (dedup is per shard), or None."""
        return self.holder(doc_id).duplicate_of(doc_id)

    def iter_journal(self, after: int = 0, upto: int | None = None) -> Iterator[tuple[int, int]]:
        """(n, doc_id) in doc order, numbered from 1: the shards' commits have no
        one order between them (as a format 1 store's docs, store.iter_journal)."""
        for n, (meta, _) in enumerate(self.iter_docs(with_documents=False), 1):
            if n > after and (upto is None or n <= upto):
                yield n, meta.doc_id

    def meta_info(self) -> dict[str, object]:
        """The first shard's metadata, its counters summed over the shards."""
        info = self.stores[0].meta_info()
        every = [s.meta_info() for s in self.stores]
        for key in COUNTER_KEYS:
            info[key] = sum(int(m.get(key, 0)) for m in every)
        info["shards"] = len(self.stores)
        return info


def open_shards(dirs: Sequence[Path]) -> ShardedStore:
    """The stores in `dirs` (shard order) read as one; close() it when done."""
    opened: list[ReadStore] = []
    try:
        for data in dirs:
            opened.append(ReadStore(Path(data)))
        return ShardedStore(opened, [str(d) for d in dirs])
    except BaseException:
        for store in opened:
            store.close()
        raise
