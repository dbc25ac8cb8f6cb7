"""The seen-set after a kill -9 (urlserver/seen.py): a frontier killed
mid-insert reopens with its Bloom filter mapped from its file, not rebuilt
from every LMDB key, and every URL it had committed is still known: offered
again, none is admitted twice. A file it cannot trust (another boot of the
kernel, LMDB moved on behind it) is rebuilt instead."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from wreck.urlserver import frontier, seen
from wreck.urlserver.frontier import SEEN_FILE

from tests.urlserver_helpers import crawl_engine

PAGES_PER_COMMIT = 20
# The child: pages of 50 links, a commit every PAGES_PER_COMMIT pages, each
# commit's last page number on stdout; it never stops on its own.
INSERTER = """
import sys
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.settings import Settings
c = Crawl.open(Settings(data=sys.argv[1], delay=0.0, scope="any", sync=False, http=None))
page = 0
while True:
    c.frontier.discover_links([f"http://h{page % 7}.test/{page}/{k}" for k in range(50)], depth=1)
    page += 1
    if page % %(per_commit)d == 0:
        c.commit()
        print(page, flush=True)
""".replace("%(per_commit)d", str(PAGES_PER_COMMIT))


def _links(page: int) -> list[str]:
    return [f"http://h{page % 7}.test/{page}/{k}" for k in range(50)]


def _kill_mid_insert(data, commits: int) -> int:
    """Run the inserter until it has committed `commits` times, kill -9 it
    while it inserts the next pages: the last committed page count."""
    proc = subprocess.Popen([sys.executable, "-c", INSERTER, str(data)], stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(commits):
            committed = int(proc.stdout.readline())
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return committed


def test_a_frontier_killed_mid_insert_reopens_with_its_filter_and_every_url_known_once(tmp_path, monkeypatch):
    committed = _kill_mid_insert(tmp_path / "d", 40)
    header = seen.HEADER.unpack(open(tmp_path / "d" / SEEN_FILE, "rb").read(seen.HEADER.size))
    assert header[3] == seen.OPEN  # left open: the writer died

    def rebuilt(self):
        raise AssertionError("the filter was rebuilt from LMDB instead of mapped from its file")

    monkeypatch.setattr(frontier.Frontier, "_rebuild_seen", rebuilt)
    c = crawl_engine(tmp_path, scope="any")
    fr = c.frontier
    assert fr.seen.mapped
    with fr.db.begin() as txn:
        recorded = txn.stat(fr.db.urls)["entries"]
    assert recorded >= committed * 50  # what was committed (and perhaps one commit more)
    from wreck.urlserver import db as d
    from wreck.urlnorm import normalize as normal
    fps = [d.fingerprint(normal(u)) for page in range(committed) for u in _links(page)]
    assert all(map(fr.seen.might_contain, fps))  # a Bloom filter may say maybe wrongly, never "no" to a known URL
    # every page offered again, up to a few past the kill: nothing known is admitted a second time
    offered = committed + 2 * PAGES_PER_COMMIT
    again = sum(fr.discover_links(_links(page), depth=1) for page in range(offered))
    c.commit()
    assert again == offered * 50 - recorded
    with fr.db.begin() as txn:
        assert txn.stat(fr.db.urls)["entries"] == offered * 50
    c.close()


def test_a_clean_stop_then_a_kill_keeps_the_urls_added_in_between(tmp_path, monkeypatch):
    c = crawl_engine(tmp_path, scope="any")
    c.frontier.discover_links(_links(10_000), depth=1)
    c.close()  # clean: the file marked so
    committed = _kill_mid_insert(tmp_path / "d", 3)
    monkeypatch.setattr(frontier.Frontier, "_rebuild_seen", lambda self: pytest.fail("rebuilt"))
    c = crawl_engine(tmp_path, scope="any")
    assert c.frontier.discover_links(_links(10_000) + _links(committed - 1), depth=1) == 0
    c.close()


@pytest.mark.parametrize("tamper", ["another boot", "lmdb moved on"])
def test_a_file_left_open_that_cannot_be_trusted_is_rebuilt(tmp_path, tamper):
    committed = _kill_mid_insert(tmp_path / "d", 2)
    path = tmp_path / "d" / SEEN_FILE
    fields = list(seen.HEADER.unpack(path.read_bytes()[:seen.HEADER.size]))
    if tamper == "another boot":  # a power cut or a kernel crash: pages of the file may be lost
        fields[2] = bytes(16)
    else:  # a transaction the filter did not follow
        fields[4] -= 2
    with open(path, "r+b") as fh:
        fh.write(seen.HEADER.pack(*fields))
        fh.seek(seen.FILE_HEADER)
        fh.write(bytes(os.path.getsize(path) - seen.FILE_HEADER))  # every bit lost: only a rebuild finds them
    c = crawl_engine(tmp_path, scope="any")
    assert c.frontier.seen.mapped  # rebuilt into a new file
    assert c.frontier.discover_links(_links(committed - 1), depth=1) == 0
    c.close()


def test_a_filter_whose_file_cannot_be_made_lives_in_memory_and_is_saved_at_a_clean_stop(tmp_path, monkeypatch,
                                                                                          caplog):
    def full(fd, offset, length):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    c = crawl_engine(tmp_path, scope="any")
    assert not c.frontier.seen.mapped and not (tmp_path / "d" / SEEN_FILE).exists()
    assert any("seen-set file" in r.getMessage() and "No space" in r.getMessage() for r in caplog.records)
    c.frontier.discover_links(_links(1), depth=1)
    c.close()  # space enough to write it whole now
    monkeypatch.setattr(frontier.Frontier, "_rebuild_seen", lambda self: pytest.fail("rebuilt"))
    c = crawl_engine(tmp_path, scope="any")
    assert c.frontier.seen.mapped and c.frontier.discover_links(_links(1), depth=1) == 0
    c.close()


def test_without_posix_fallocate_the_file_is_made_whole_with_zeros(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "posix_fallocate")  # as on macOS
    from wreck.urlserver import db as d
    fps = [d.fingerprint(u) for u in _links(3)]
    filt = seen.SeenSet()
    filt.rebuild(iter(fps), capacity=1 << 18, path=str(tmp_path / SEEN_FILE), stamp=7)
    assert filt.mapped and os.path.getsize(tmp_path / SEEN_FILE) == seen.FILE_HEADER + filt.memory_bytes
    reread = seen.SeenSet()
    assert reread.load(str(tmp_path / SEEN_FILE), 7) and all(map(reread.might_contain, fps))
