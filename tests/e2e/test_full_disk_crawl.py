"""A disk that fills mid-crawl, for the store and for the urlserver, in a
whole crawl of the local test web (the three daemons as subprocesses, the
full disk a small tmpfs this test mounts and fills with ballast).

Store: it stops acking, spiders hold their records and keep their claims
alive with WORKING, the urlserver keeps those URLs in flight; once space
returns the crawl completes with every page stored once.

urlserver: it cannot commit its state, says so, hands out nothing more and
exits 1; started again on the same --data once space returns, it resumes
from its last commit and the crawl completes with every page stored once.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.chaos import ChaosSpec, Crawl, Progress, verify
from tests.web import RunningWeb, SiteSpec, compute_truth
from wreck.urlserver.urlstate import UrlState

from tests.disk_helpers import SMALL_DISK, fill, small_tmpfs
from tests.e2e_helpers import url_states as _url_states

TIMEOUT = 60.0
# Timeout_Update, s. The spider names a held transaction at most two thirds
# of it after the last report (tests/spider/test_spider_exchange.py checks
# that on virtual time); the third left over is what a process descheduled
# on a loaded machine may lose here, between real processes, before a claim
# expires: so not less than this.
TIMEOUT_UPDATE = 2.0
FULL_FOR = 2 * TIMEOUT_UPDATE  # how long the disk stays full: claims would expire twice over
SPEC = SiteSpec(hosts=4, pages_per_host=20, hostile=False)
SLOW = ("--delay", "0.15", "--timeout-update", str(TIMEOUT_UPDATE))  # a crawl of a few seconds


@pytest.fixture
def small_disk(tmp_path):
    """A small tmpfs mounted for this test, or a skip with the reason."""
    with small_tmpfs(tmp_path / "small", SMALL_DISK) as mnt:
        yield mnt


def _until(condition, what: str, crawl: Crawl) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen\n{crawl.logs()}"
        time.sleep(0.05)


def _log(crawl: Crawl, name: str) -> str:
    return (crawl.tmp / f"{name}.log").read_text()


def _crawl_into_a_full_disk(tmp_path: Path, disk: Path, *, on: str, while_full) -> Crawl:
    """Crawl with `on` ("store" or "frontier") on the small disk, fill it once
    documents flow, run while_full(crawl, progress, ballast) -- the test's
    part, which ends by freeing the space -- then the crawl must finish with
    nothing lost. The crawl, for its logs."""
    paths = {"store": tmp_path / "store", "frontier": tmp_path / "frontier", on: disk / on}
    with RunningWeb(SPEC) as web:
        seeds = [web.url("h0.wreck.test")]
        crawl = Crawl(tmp_path, web, seeds, ChaosSpec(procs=1, concurrency=20), store_data=paths["store"],
                      frontier_data=paths["frontier"], urlserver_args=SLOW)
        progress = Progress(paths["store"])
        try:
            _until(lambda: progress.docs() >= 5, "the first documents", crawl)
            while_full(crawl, progress, fill(disk))
            assert crawl.urlserver.proc.wait(TIMEOUT) == 0, crawl.logs()
        finally:
            crawl.stop()
            progress.close()
        result = verify(paths["store"], paths["frontier"], compute_truth(web.site, seeds), web.log.records())
    assert result["documents_lost"] == result["duplicates"] == result["transactions_lost"] == 0, result
    assert result["doc_ids_reused"] == 0 and result["crawl_finished"], result
    return crawl


def test_a_full_store_holds_acks_spiders_keep_claims_and_the_crawl_completes(tmp_path, small_disk):
    def while_full(crawl: Crawl, progress: Progress, ballast: Path) -> None:
        _until(lambda: "cannot commit" in _log(crawl, "storeserver"), "a failed commit", crawl)
        stuck = progress.docs()
        time.sleep(FULL_FOR)
        states = _url_states(tmp_path / "frontier")
        assert progress.docs() == stuck, "nothing is acked while the disk is full"
        assert crawl.urlserver.running()
        assert [u for u, r in states.items() if r.state == UrlState.IN_FLIGHT], "claims are held"
        ballast.unlink()  # space returns

    crawl = _crawl_into_a_full_disk(tmp_path, small_disk, on="store", while_full=while_full)
    assert "commits succeed again" in _log(crawl, "storeserver")
    assert "claim_expired" not in _log(crawl, "urlserver"), "WORKING kept every claim alive"


def test_a_full_urlserver_disk_stops_it_cleanly_and_a_restart_completes_the_crawl(tmp_path, small_disk):
    def while_full(crawl: Crawl, progress: Progress, ballast: Path) -> None:
        assert crawl.urlserver.proc.wait(TIMEOUT) == 1, crawl.logs()
        assert "event=state_unwritable" in _log(crawl, "urlserver")
        ballast.unlink()  # space returns: the same command again
        crawl.urlserver = crawl.start_urlserver()

    _crawl_into_a_full_disk(tmp_path, small_disk, on="frontier", while_full=while_full)
