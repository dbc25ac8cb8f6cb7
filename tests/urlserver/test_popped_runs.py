"""Popped queue entries deleted a run at a time (urlserver/frontier.py,
SWEEP_RUN): a urlserver killed -9 after handing out URLs whose entries it
had not deleted yet finds them again at its queues' heads, and skips them:
the same URLs are queued after the restart as before the kill, none is lost,
none is handed out twice, the queued count /status shows is the one it
showed, and the skips are no warnings. A clean stop keeps the popped runs
in queues.bounds for the next start."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys

import pytest

from wreck.protocol import Done, Specific, Status
from wreck.urlserver import queuebounds
from wreck.urlserver.frontier import BOUNDS_FILE, SWEEP_RUN

from tests.urlserver_helpers import crawl_engine, take_resolving

HOSTS = 3
LINKS = 100
HANDED = 150  # about 50 a host: fewer than SWEEP_RUN, so every popped entry is still in LMDB at the kill
IN_FLIGHT = 2  # the last hand-outs, not answered: their claims stand at the kill

# The child: hands out HANDED URLs of the crawl in argv[1] (answering all but
# the last IN_FLIGHT), commits, prints what it did, and kills itself -9.
CHILD = """
import json, os, signal, sys
from wreck.protocol import Done, Specific, Status
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.dns import Resolution
from wreck.urlserver.settings import Settings
c = Crawl.open(Settings(data=sys.argv[1], delay=0.0, allow_net=("127.0.0.0/8",), sync=False, retry_delay=10.0,
                        max_retries=2, scope="any"), clock=lambda: 0.0)
handed, in_flight = int(sys.argv[2]), int(sys.argv[3])
out = {"fetched": [], "in_flight": []}
while len(out["fetched"]) + len(out["in_flight"]) < handed:
    a = c.take("s", 0.0)
    for h in c.dns_requests():
        c.dns_result(h, Resolution("127.0.0.2", "", 1e12), 0.0)
    a = a or c.take("s", 0.0)
    if a.url.endswith("/robots.txt"):
        c.done("s", Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1), 0.0)
    elif len(out["fetched"]) < handed - in_flight:
        c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1), 0.0)
        out["fetched"].append(a.url)
    else:
        out["in_flight"].append(a.url)
c.commit()
out["queued_total"] = c.frontier.queued_total
out["popped_in_lmdb"] = sum(h.head - first for h, first in c.frontier._popped.items())
print(json.dumps(out), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _urls() -> list[str]:
    return [f"http://h{host}.test/p{k}" for host in range(HOSTS) for k in range(LINKS)]


def _queue_entries(c) -> int:
    with c.db.begin() as txn:
        return txn.stat(c.db.queue)["entries"]


def _queued_then_stopped(tmp_path) -> None:
    c = crawl_engine(tmp_path, scope="any")
    for host in range(HOSTS):
        c.frontier.discover_links([u for u in _urls() if u.startswith(f"http://h{host}.")], depth=1)
    c.close()


def _kill_after_handouts(tmp_path) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "d"), str(HANDED), str(IN_FLIGHT)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == -9, proc.stderr
    return json.loads(proc.stdout)


def _watch_bounds(monkeypatch) -> list[bool]:
    """Whether each start from now on found a queues.bounds it trusts."""
    used: list[bool] = []
    take = queuebounds.take
    monkeypatch.setattr(queuebounds, "take", lambda *a: (lambda w: (used.append(w is not None), w)[1])(take(*a)))
    return used


def _hand_out_everything(c, limit: int | None = None) -> list[str]:
    """Every URL handed out from here to the end (or the first `limit`), each answered FETCHED."""
    handed = []
    while (limit is None or len(handed) < limit) and (a := take_resolving(c, 0.0)) is not None:
        if a.url.endswith("/robots.txt"):
            c.done("s", Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1), 0.0)
            continue
        handed.append(a.url)
        c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1), 0.0)
    c.commit()
    return handed


@pytest.mark.parametrize("stale_bounds", [False, True], ids=["probed", "stale-bounds-file-left"])
def test_a_kill_9_before_the_popped_entries_are_deleted_loses_and_repeats_no_url(tmp_path, monkeypatch, caplog,
                                                                                stale_bounds):
    _queued_then_stopped(tmp_path)
    clean_stop_file = (tmp_path / "d" / BOUNDS_FILE).read_bytes()
    killed = _kill_after_handouts(tmp_path)
    assert killed["popped_in_lmdb"] >= HANDED  # the kill came before any run was deleted
    assert killed["queued_total"] == HOSTS * LINKS - HANDED
    if stale_bounds:  # the clean stop's file, as if it were left behind: LMDB has moved past it
        (tmp_path / "d" / BOUNDS_FILE).write_bytes(clean_stop_file)
    used = _watch_bounds(monkeypatch)
    caplog.set_level(logging.WARNING, logger="urlserver")
    c = crawl_engine(tmp_path, scope="any")
    assert used == [False]
    # what /status shows: the URLs queued at the kill, and the claims that stood, requeued
    assert c.frontier.queued_total == HOSTS * LINKS - len(killed["fetched"])
    assert sum(host.queued for host in c.frontier.origins.values()) > c.frontier.queued_total  # the popped, still there
    handed = _hand_out_everything(c)
    assert len(handed) == len(set(handed))  # none twice
    assert set(handed) == set(_urls()) - set(killed["fetched"])  # none lost, and nothing fetched again
    assert set(killed["in_flight"]) <= set(handed)
    assert c.frontier.counts["FETCHED"] == HOSTS * LINKS
    assert c.frontier.queued_total == 0
    assert c.frontier.unswept == 0  # every popped entry found again was counted back
    assert not [r for r in caplog.records if "stale_entry" in r.getMessage()]
    c.close()


def test_a_clean_stop_keeps_the_popped_runs_and_both_kinds_of_start_take_them_up(tmp_path, monkeypatch, caplog):
    """A clean stop deletes nothing more: queues.bounds keeps each host's
    first popped entry with its head, and the next start deletes the run
    with the host's next ones; a start without the file (probes) finds the
    popped entries at the heads and skips them, with the same count."""
    _queued_then_stopped(tmp_path)
    c = crawl_engine(tmp_path, scope="any")
    fetched = _hand_out_everything(c, HANDED)
    popped = _queue_entries(c) - c.frontier.queued_total
    assert popped >= HANDED  # popped, not deleted yet
    bounds = {origin: (host.head, host.tail) for origin, host in c.frontier.origins.items()}
    c.close()
    shutil.copytree(tmp_path / "d", tmp_path / "copy" / "d")
    (tmp_path / "copy" / "d" / BOUNDS_FILE).unlink()
    used = _watch_bounds(monkeypatch)
    caplog.set_level(logging.WARNING, logger="urlserver")
    for where in (tmp_path, tmp_path / "copy"):  # the bounds saved at the stop, and the probes
        c = crawl_engine(where, scope="any")
        assert c.frontier.queued_total == HOSTS * LINKS - HANDED
        assert _queue_entries(c) == c.frontier.queued_total + popped  # the stop deleted none
        if where == tmp_path:
            assert {origin: (host.head, host.tail) for origin, host in c.frontier.origins.items()} == bounds
            assert c.frontier.unswept == 0
        else:
            assert c.frontier.unswept == popped  # found at the heads, to be skipped
        assert set(_hand_out_everything(c)) == set(_urls()) - set(fetched)
        assert _queue_entries(c) == c.frontier.queued_total == 0  # every queue emptied: every run deleted
        c.close()
    assert used == [True, False]
    assert not [r for r in caplog.records if "stale_entry" in r.getMessage()]


def test_a_run_of_popped_entries_is_deleted_once_it_is_long_enough(tmp_path):
    c = crawl_engine(tmp_path, scope="any")
    c.frontier.discover_links([f"http://h.test/p{k}" for k in range(SWEEP_RUN * 3)], depth=1)
    c.commit()
    host = c.frontier.origins["http://h.test"]
    for _ in range(SWEEP_RUN - 1):
        c.frontier.pop(host)
    assert _queue_entries_in(c) == SWEEP_RUN * 3
    c.frontier.pop(host)
    assert _queue_entries_in(c) == SWEEP_RUN * 2 == host.queued
    entry = c.frontier.pop(host)
    c.frontier.push(host, entry, front=True)  # put back (a suspect's turn): the same entry, nothing to delete
    assert _queue_entries_in(c) == SWEEP_RUN * 2 == host.queued
    while c.frontier.pop(host) is not None:
        pass
    assert _queue_entries_in(c) == 0  # an emptied queue is deleted at once
    c.close()


def _queue_entries_in(c) -> int:
    """Entries in the queue table as the open transaction sees them."""
    return c.frontier.txn.stat(c.db.queue)["entries"]
