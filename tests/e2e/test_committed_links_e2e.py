"""Links left out of DONEs (docs/protocol.txt 5.5.1) under kill -9 of the
urlserver: the spider leaves out only links of DONEs the urlserver named in
COMMITTED on the same connection, so DONEs lost with the urlserver's
uncommitted transaction (and their links) are never trusted, and after
every kill the stored set is still the reachable set (tests/chaos.py)."""

from __future__ import annotations

import re

from tests.chaos import ChaosSpec, ok, run


def test_kill_9_of_the_urlserver_while_spiders_leave_known_links_out_loses_no_page(tmp_path):
    spec = ChaosSpec(hosts=6, pages_per_host=50, kills=4, seed=5, victims=("urlserver",), procs=2,
                     concurrency=20, pages_between_kills=15)
    result = run(spec, tmp_path, say=print)
    assert result["kills_survived"] == 4 and result["kills_by_victim"] == {"urlserver": 4}, result
    assert result["documents_lost"] == 0 and result["duplicates"] == 0, result
    assert result["finished"] and ok(result), result
    # the spiders did leave links out: the sessions that ended cleanly say how many
    left_out = [int(n) for n in re.findall(r"links_left_out=(\d+)", (tmp_path / "spider.log").read_text())]
    assert left_out and sum(left_out) > 0
