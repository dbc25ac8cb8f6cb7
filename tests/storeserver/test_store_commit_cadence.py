"""The commit cadence (storeserver/committer.py): while one batch commits and
the next waits prepared, records that arrive stay queued and go together in
the batch after, so a record waits about two commits, never one more behind
a batch formed early; and none is acknowledged before its own commit."""

from __future__ import annotations

import threading

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver.committer import Committer
from wreck.storeserver.compress import Compressor
from wreck.storeserver.settings import MAX_MAP_GROWTH
from wreck.storeserver.store import WriteStore

PAGE = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body>a page</body></html>"
WAIT_S = 30  # a bound on each wait for the writer threads, never reached when they work


class HeldStore(WriteStore):
    """A store whose first commit waits until the test lets it go."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.in_first_commit = threading.Event()
        self.release = threading.Event()
        self.batches: list[list[int]] = []

    def commit(self, batch, *args, **kwargs):
        if not self.batches:
            self.in_first_commit.set()
            assert self.release.wait(WAIT_S)
        self.batches.append([p.doc_id for p in batch])
        return super().commit(batch, *args, **kwargs)


def _record(doc_id: int) -> Record:
    return Record(doc_id, True, Specific.OK, http_enum(200), 5, f"http://a.test/{doc_id}", None, PAGE)


def test_records_arriving_while_a_prepared_batch_waits_join_the_batch_right_after_it(tmp_path):
    store = HeldStore(tmp_path, map_size=1 << 24, max_growth=MAX_MAP_GROWTH)
    comp = Compressor(level=3, dict_size=1 << 16, train_docs=0, sample_bytes=1024)
    preparing = threading.Event()
    compress_many = comp.compress_many

    def watched(docs):
        preparing.set()
        return compress_many(docs)

    comp.compress_many = watched
    acked: list[int] = []
    writer = Committer(store, comp, window_s=0, on_commit=lambda results: acked.extend(r[1] for r in results),
                       on_full=lambda *a: None, on_fatal=lambda exc: acked.append(-1))
    writer.start()
    writer.submit(_record(1), None)
    assert store.in_first_commit.wait(WAIT_S)
    preparing.clear()
    writer.submit(_record(2), None)
    assert preparing.wait(WAIT_S)  # record 2's batch is being prepared behind the commit held
    writer.submit(_record(3), None)
    writer.submit(_record(4), None)
    assert acked == []  # nothing acknowledged before its commit
    store.release.set()
    assert writer.stop(WAIT_S)
    assert store.batches == [[1], [2], [3, 4]]
    assert acked == [1, 2, 3, 4]
    store.close()
