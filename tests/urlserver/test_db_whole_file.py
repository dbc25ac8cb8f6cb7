"""A state whose last commit freed the pages it had just allocated (LMDB
leaves such loose pages unwritten) still opens: the urlserver keeps
data.mdb as long as its pages (wreck/lmdbformat.py keep_whole), and a file
an earlier WRECK left short of such pages is checked against the free list
(wreck/lmdbfree.py), so the open refuses only a file really cut short."""

from __future__ import annotations

import os
import random

import pytest

from wreck.urlserver import db as db_module
from wreck.urlserver.db import Db, StateError

# Without keep_whole, this seed's workload below left data.mdb short of its
# meta page's last page number from its first commit (seeds 2 and 3 of 1-3
# within two commits, LMDB 0.9 through py-lmdb), and the next open refused
# the state as truncated; 60 commits try more such ends.
SEED, COMMITS = 3, 60


def churn(db: Db, rng: random.Random, log: int) -> int:
    """One commit that puts and deletes records at random in three databases
    and appends log records of overflow pages to meta, then deletes them all
    now and then, as the queues, URL records and the admitted log do; the
    log's next number."""
    txn = db.begin(write=True)
    for name in (db.urls, db.queue, db.hosts):
        for _ in range(rng.randrange(300)):
            txn.put(rng.randbytes(6), rng.randbytes(rng.randrange(10, 200)), db=name)
        cursor = txn.cursor(db=name)
        if cursor.set_range(rng.randbytes(6)):
            stop = rng.randrange(400)
            while stop and cursor.delete():
                stop -= 1
    for _ in range(rng.randrange(50)):
        txn.put(b"log%08d" % log, rng.randbytes(rng.randrange(100, 9000)), db=db.meta)
        log += 1
    if rng.random() < 0.05:
        cursor = txn.cursor(db=db.meta)
        if cursor.set_range(b"log"):
            while cursor.key().startswith(b"log") and cursor.delete():
                pass
    db.commit(txn)
    return log


def test_a_state_whose_commits_freed_their_last_pages_reopens_after_every_commit(tmp_path):
    path, rng, log = str(tmp_path / "d"), random.Random(SEED), 0
    for _ in range(COMMITS):
        db = Db(path, sync=False)  # without keep_whole: StateError ("truncated") from the second round
        log = churn(db, rng, log)
        db.close()
    again = Db(path, sync=False)
    txn = again.begin()
    assert txn.stat(again.urls)["entries"] > 0 and txn.get(b"log%08d" % (log - 1), db=again.meta) is not None
    txn.abort()
    again.close()


def test_a_state_an_earlier_wreck_left_short_of_free_pages_opens(tmp_path, monkeypatch):
    path, rng, log = str(tmp_path / "d"), random.Random(SEED), 0
    monkeypatch.setattr(db_module, "keep_whole", lambda env, path: None)  # as before keep_whole
    db = Db(path, sync=False)
    log = churn(db, rng, log)
    last = db.env.info()["last_pgno"]
    db.close()
    data = os.path.join(path, "data.mdb")
    assert os.path.getsize(data) < (last + 1) * 4096  # the file ends before its last pages: free ones
    again = Db(path, sync=False)  # checked against the free list (wreck/lmdbfree.py), not refused
    txn = again.begin()
    names = (again.urls, again.queue, again.hosts, again.meta)
    assert [len(list(txn.cursor(db=name))) for name in names] == [txn.stat(name)["entries"] for name in names]
    assert txn.stat(again.urls)["entries"] > 0  # every item read back through the map: no page was lost
    txn.abort()
    log = churn(again, rng, log)  # and it takes commits again
    again.close()


def test_a_state_cut_short_after_a_clean_stop_is_still_refused_in_one_line(tmp_path):
    path = str(tmp_path / "d")
    db, rng, log = Db(path, sync=False), random.Random(SEED), 0
    for _ in range(20):
        log = churn(db, rng, log)
    db.close()
    data = os.path.join(path, "data.mdb")
    os.truncate(data, os.path.getsize(data) // 2)  # pages its databases use are gone
    with pytest.raises(StateError, match="truncated"):
        Db(path, sync=False)
