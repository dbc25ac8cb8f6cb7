"""The queues' bounds saved at a clean stop (urlserver/queuebounds.py): the
next start reads each host's queue head and tail from queues.bounds instead
of probing LMDB for them, and gets the same bounds the probes give; a file
that no longer describes the state (LMDB moved on since, a truncated file,
rows of other hosts) is not trusted, and the start probes instead."""

from __future__ import annotations

import shutil

from wreck.protocol import Done, Specific, Status
from wreck.urlserver import queuebounds
from wreck.urlserver.frontier import BOUNDS_FILE

from tests.urlserver_helpers import crawl_engine, take_resolving

HOSTS = 5
LINKS = 20
FETCHED = 8


def _links(host: int, start: int = 0) -> list[str]:
    return [f"http://h{host}.test/p{k}" for k in range(start, start + LINKS)]


def _bounds(c) -> dict[str, tuple[int, int]]:
    """Each host's first entry in LMDB and its tail: a start that probes finds
    its popped entries not deleted yet at the head (frontier.py, SWEEP_RUN)."""
    popped = c.frontier._popped
    return {origin: (popped.get(host, host.head), host.tail) for origin, host in c.frontier.origins.items()}


def _watch(monkeypatch) -> list[bool]:
    """Whether each start from now on found a file it trusts."""
    used: list[bool] = []
    take = queuebounds.take
    monkeypatch.setattr(queuebounds, "take", lambda *a: (lambda w: (used.append(w is not None), w)[1])(take(*a)))
    return used


def _crawl_then_stop(tmp_path) -> None:
    """Five hosts' links queued, FETCHED pages handed out and done (their
    hosts' heads move), then a clean stop."""
    c = crawl_engine(tmp_path, scope="any")
    for host in range(HOSTS):
        c.frontier.discover_links(_links(host), depth=1)
    c.commit()
    fetched = 0
    while fetched < FETCHED:
        a = take_resolving(c, 0.0)
        if a.url.endswith("/robots.txt"):  # none: every path allowed
            c.done("s", Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1), 0.0)
        else:
            c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1), 0.0)
            fetched += 1
    c.close()


def _probed(tmp_path, name: str) -> dict[str, tuple[int, int]]:
    """The bounds a start without the file finds, on a copy of the state."""
    copy = tmp_path / name
    shutil.copytree(tmp_path / "d", copy / "d")
    (copy / "d" / BOUNDS_FILE).unlink(missing_ok=True)
    c = crawl_engine(copy, scope="any")
    try:
        return _bounds(c)
    finally:
        c.close()


def test_a_clean_stop_saves_the_bounds_and_the_next_start_reads_the_same_ones(tmp_path, monkeypatch):
    _crawl_then_stop(tmp_path)
    assert (tmp_path / "d" / BOUNDS_FILE).exists()
    probed = _probed(tmp_path, "probe")
    used = _watch(monkeypatch)
    c = crawl_engine(tmp_path, scope="any")
    assert used == [True]
    assert not (tmp_path / "d" / BOUNDS_FILE).exists()  # read once: a later start cannot trust it
    assert _bounds(c) == probed
    queued = [c.frontier.origins[f"http://h{k}.test"].queued for k in range(HOSTS)]
    assert sum(queued) == HOSTS * LINKS - FETCHED  # what the user left queued is still there, no more
    assert min(queued) < LINKS  # some heads moved
    c.close()


def test_a_file_that_lmdb_has_moved_past_is_not_trusted(tmp_path, monkeypatch):
    _crawl_then_stop(tmp_path)
    old = (tmp_path / "d" / BOUNDS_FILE).read_bytes()
    c = crawl_engine(tmp_path, scope="any")
    for host in range(HOSTS):  # more links: every tail moves
        c.frontier.discover_links(_links(host, LINKS), depth=1)
    c.close()
    (tmp_path / "d" / BOUNDS_FILE).write_bytes(old)  # as if that stop's file were left behind
    probed = _probed(tmp_path, "probe")
    used = _watch(monkeypatch)
    c = crawl_engine(tmp_path, scope="any")
    assert used == [False]
    assert _bounds(c) == probed
    assert c.frontier.queued_total == 2 * HOSTS * LINKS - FETCHED
    c.close()


def test_rows_of_other_hosts_and_a_cut_file_are_probed_instead(tmp_path, monkeypatch):
    _crawl_then_stop(tmp_path)
    probed = _probed(tmp_path, "probe")
    path = tmp_path / "d" / BOUNDS_FILE
    header = queuebounds.HEADER.unpack(path.read_bytes()[:queuebounds.HEADER.size])
    stamp, count = header[2], header[3]
    # right stamp and count, but every row names another host and claims empty queues
    queuebounds.save(str(path), stamp, [(queuebounds.NO_HOST, 7, 7, 7)] * count)
    used = _watch(monkeypatch)
    c = crawl_engine(tmp_path, scope="any")
    assert used == [True]  # the file was read, and every row refused
    assert _bounds(c) == probed
    c.close()
    whole = path.read_bytes()
    path.write_bytes(whole[:-8])  # the clean stop's file, cut short
    used.clear()
    c = crawl_engine(tmp_path, scope="any")
    assert used == [False]
    assert _bounds(c) == probed
    c.close()


def test_probes_spread_over_threads_find_the_same_bounds(tmp_path, monkeypatch):
    """After a kill -9 (no file), a large crawl's hosts are probed on several
    threads; here five hosts on three, against the one-thread probes."""
    _crawl_then_stop(tmp_path)
    probed = _probed(tmp_path, "probe")
    (tmp_path / "d" / BOUNDS_FILE).unlink()
    monkeypatch.setattr(queuebounds, "PROBES_INLINE", 0)
    monkeypatch.setattr(queuebounds, "PROBE_THREADS", 3)
    c = crawl_engine(tmp_path, scope="any")
    assert _bounds(c) == probed
    assert c.frontier.queued_total == HOSTS * LINKS - FETCHED
    c.close()


def test_probes_in_id_order_find_each_queue_among_empty_ones_and_gaps(tmp_path, monkeypatch):
    """One search a host (queuebounds._probe): queues of every length, empty
    ones between them, host ids the probe is not asked about, the last id's
    queue at the end of the table; each host's bounds as its own two searches
    find them."""
    from wreck.urlserver import db as d
    from wreck.urlserver.politeness import Origin

    database = d.Db(str(tmp_path / "q"), sync=False)
    lengths = {1: 3, 2: 0, 3: 1, 4: 0, 5: 0, 7: 5, 8: 2, 10: 0, 12: 4}  # host id -> queued (6, 9, 11: not asked)
    with database.env.begin(write=True) as txn:
        for host_id, length in {**lengths, 6: 2, 9: 1, 11: 3}.items():
            for seq in range(100 + host_id, 100 + host_id + length):
                txn.put(d.QKEY.pack(host_id, seq), b"e", db=database.queue)
    monkeypatch.setattr(queuebounds, "PROBES_INLINE", 0)
    for threads in (1, 2, 4):
        monkeypatch.setattr(queuebounds, "PROBE_THREADS", threads)
        hosts = [Origin(f"http://h{i}.test", f"h{i}.test", i, 7, 7, 0) for i in reversed(lengths)]
        queuebounds.probe(database, hosts)
        found = {host.id: (host.head, host.tail) for host in hosts}
        assert found == {i: (100 + i, 100 + i + n) if n else (7, 7) for i, n in lengths.items()}, threads
    database.close()
