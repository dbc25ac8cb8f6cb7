"""The frontier's host-local keys (issue 16, urlserver/db.py): one origin's
URL records are one contiguous key range, a crawl reopens on its own
format, and a data directory of an older layout (format 1, or 2 before
issue 18's via and hop path) is refused in one line, untouched."""

from __future__ import annotations

import subprocess
import sys

import lmdb
import pytest

from wreck.urlserver import db as d
from wreck.urlserver import frontier, seen
from wreck.urlserver.frontier import SEEN_FILE
from wreck.urlserver.seen import SeenSet

from tests.urlserver_helpers import crawl_engine


def test_a_pages_links_to_its_own_site_are_one_range_of_keys(tmp_path):
    c = crawl_engine(tmp_path, scope="any")
    c.add_seed("http://a.test/")
    c.add_seed("http://b.test/")
    c.frontier.discover_links([f"http://a.test/p{i}" for i in range(50)]
                              + [f"http://b.test/q{i}" for i in range(50)], depth=1)
    c.commit()
    with c.frontier.db.begin() as txn:
        keys = [key for key, _ in txn.cursor(db=c.frontier.db.urls)]
    prefixes = [key[:2] for key in keys]
    assert len(keys) == 102 and len(set(prefixes)) == 2
    # sorted keys: each origin's records one after the other, not interleaved
    assert sum(1 for x, y in zip(prefixes, prefixes[1:]) if x != y) == 1
    assert c.frontier.lookup("http://a.test/p7")["state"] == "PENDING"
    c.close()


def test_a_crawl_reopens_with_its_urls_known(tmp_path):
    c = crawl_engine(tmp_path, scope="any")
    c.add_seed("http://a.test/")
    c.commit()
    c.close()
    c = crawl_engine(tmp_path, scope="any")
    assert c.add_seed("http://a.test/") == "known"
    assert c.frontier.lookup("http://a.test/")["state"] == "PENDING"
    c.close()


@pytest.mark.parametrize("older, change", [(1, "host-local URL keys"), (2, "via and hop path")])
def test_a_data_directory_of_an_older_layout_is_refused_in_one_line(tmp_path, older, change):
    data = tmp_path / "d"
    c = crawl_engine(tmp_path)
    c.add_seed("http://a.test/")
    c.commit()
    c.close()
    env = lmdb.open(str(data), max_dbs=len(d.Db.NAMES))
    with env.begin(write=True) as txn:
        meta = env.open_db(b"meta", txn=txn)
        if older == 1:  # as a urlserver before issue 16 left it: no format in meta (keys the URL hash alone)
            assert txn.delete(d.FORMAT_KEY, db=meta)
        else:  # before issue 18: URL records without their via and hop path
            txn.put(d.FORMAT_KEY, d.U64.pack(older), db=meta)
    env.close()
    before = (data / "data.mdb").read_bytes()
    proc = subprocess.run([sys.executable, "-m", "wreck.urlserver.cli", "--data", str(data),
                           "--listen", "127.0.0.1:0", "--store", "127.0.0.1:1"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line and "warning: listening" not in line]
    assert len(lines) == 1 and f"format {older}" in lines[0] and change in lines[0], proc.stderr
    assert "empty directory" in lines[0]
    assert (data / "data.mdb").read_bytes() == before


def test_the_seen_filter_holds_two_to_four_bytes_per_known_url_as_it_grows_and_after_a_kill(tmp_path, monkeypatch):
    monkeypatch.setattr(frontier, "SEEN_START", 1 << 14)  # so that 300,000 URLs make it grow a few times
    c = crawl_engine(tmp_path, scope="any")
    c.add_seed("http://a.test/")
    sizes = []
    for page in range(3_000):  # 300,000 URLs: the filter fills and doubles
        c.frontier.discover_links([f"http://a.test/{page}/{k}" for k in range(100)], depth=1)
        c.commit()
        sizes.append(c.frontier.seen.memory_bytes / (100 * page + 101))
    assert 1.9 <= min(sizes[1000:]) and max(sizes[1000:]) <= 4.0  # full (a commit may overfill it a little) .. doubled
    c.close()
    (tmp_path / "d" / SEEN_FILE).unlink()  # as a kill -9 leaves it: rebuilt from LMDB's keys
    c = crawl_engine(tmp_path, scope="any")
    assert 2.0 <= c.frontier.seen.memory_bytes / 300_001 <= 4.0
    c.close()


def test_a_rebuilt_seen_filter_has_the_bits_of_one_filled_link_by_link(monkeypatch):
    monkeypatch.setattr(seen, "REBUILD_CHUNK", 7_000)  # several chunks and a short last one
    fps = [d.fingerprint(f"http://h{i % 97}.test/{i}") for i in range(50_000)]
    one_by_one, rebuilt = SeenSet(), SeenSet()
    one_by_one._alloc(60_000)
    for fp in fps:
        one_by_one.check_and_add(fp)
    rebuilt.rebuild(iter(fps), capacity=60_000)  # numpy, a chunk at a time
    assert rebuilt.memory_bytes == one_by_one.memory_bytes and rebuilt._words == one_by_one._words
    assert all(rebuilt.might_contain(fp) for fp in fps)
