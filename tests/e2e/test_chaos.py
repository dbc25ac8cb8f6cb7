"""Chaos, short form (make chaos runs the long one): during a crawl of the
local test web, kill -9 each kind of component -- the urlserver, the store
server, one spider worker, the whole spider -- at random moments (seeded),
restart it, and at the end find every reachable, allowed page stored
exactly once, no doc id given to two URLs, no claim or unfinished URL left,
and the crawl finished (tests.chaos.py)."""

from __future__ import annotations

from tests.chaos import VICTIMS, ChaosSpec, ok, run


def test_kill_9_of_every_component_mid_crawl_loses_and_duplicates_nothing(tmp_path):
    spec = ChaosSpec(hosts=6, pages_per_host=50, kills=4, seed=11, victims=VICTIMS, procs=2,
                     concurrency=20, pages_between_kills=10, every_victim=True)
    result = run(spec, tmp_path, say=print)
    assert result["kills_survived"] == 4 and set(result["kills_by_victim"]) == set(VICTIMS), result
    assert result["documents_lost"] == 0 and result["duplicates"] == 0, result
    assert result["doc_ids_reused"] == 0 and result["transactions_lost"] == 0, result
    assert result["finished"] and ok(result), result
