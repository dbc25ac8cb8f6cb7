"""The hosts' admitted counts kept in a log between folds (urlserver/frontier.py,
ADMITTED LOG): a urlserver killed -9 with counts that only the log holds
resumes every budget from its last commit, so --max-pages and
--max-pages-per-domain are never exceeded across the kill; a clean stop
folds the log into the hosts table, where the last WRECK reads the counts."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest

from wreck.urlserver import db as d
from wreck.urlserver.frontier import ADMITTED_PREFIX
from wreck.urlserver.scope import split_host
from wreck.urlserver.urlstate import UrlState

from tests.urlserver_helpers import crawl_engine

HOSTS = 4  # a0.test... (a domain each) and b0.dom.test... (one domain)
BUDGET = 40  # --max-pages
DOMAIN_BUDGET = 150  # --max-pages-per-domain: dom.test's HOSTS hosts share it
ROUNDS = 5  # commits in the child, each adding PER_ROUND links to every host
PER_ROUND = 6
SITES = (("a", "test"), ("b", "dom.test"))

# The child: opens the crawl in argv[1] (FOLD_ENTRIES set to argv[2]), adds
# PER_ROUND new links a host in each of ROUNDS commits, a page more that is
# not committed, and kills itself -9.
CHILD = """
import os, signal, sys
from wreck.urlserver import frontier
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.settings import Settings
frontier.FOLD_ENTRIES = int(sys.argv[2])
c = Crawl.open(Settings(data=sys.argv[1], delay=0.0, allow_net=("127.0.0.0/8",), sync=False, scope="any",
                        max_pages=int(sys.argv[3]), max_pages_per_domain=int(sys.argv[4]), max_hosts_per_domain=0))
hosts, rounds, per_round = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
for r in range(rounds + 1):
    c.frontier.discover_links([f"http://{site}{h}.{domain}/r{r}/{k}"
                               for site, domain in (("a", "test"), ("b", "dom.test"))
                               for h in range(hosts) for k in range(per_round)], depth=1)
    if r < rounds:  # the last round is lost with the kill
        c.commit()
os.kill(os.getpid(), signal.SIGKILL)
"""


def _engine(tmp_path):
    return crawl_engine(tmp_path, scope="any", max_pages=BUDGET, max_pages_per_domain=DOMAIN_BUDGET,
                        max_hosts_per_domain=0)


def _admitted_by_host(c) -> Counter:
    """URLs each origin has that were admitted (every record but the FILTERED ones), as committed."""
    c.commit()
    counts: Counter = Counter()
    with c.db.begin() as txn:
        for _, raw in txn.cursor(db=c.db.urls):
            if d.record_state(raw) != UrlState.FILTERED:
                counts[split_host(d.record_url(raw))[0]] += 1
    return counts


def _log_items(c) -> int:
    with c.db.begin() as txn:
        cur = txn.cursor(db=c.db.meta)
        found = 0
        if cur.set_range(ADMITTED_PREFIX):
            for key, value in cur:
                if not key.startswith(ADMITTED_PREFIX):
                    break
                found += len(value) // d.HOSTREC.size
        return found


def _table_counts(c) -> dict[str, int]:
    with c.db.begin() as txn:
        return {key.decode(): d.HOSTREC.unpack(value)[1] for key, value in txn.cursor(db=c.db.hosts)}


def _start_then_kill(tmp_path, fold_entries: int) -> None:
    c = _engine(tmp_path)  # every host known (a first link each), stopped cleanly
    c.frontier.discover_links([f"http://{site}{h}.{domain}/" for site, domain in SITES for h in range(HOSTS)], depth=1)
    c.close()
    proc = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "d"), str(fold_entries), str(BUDGET),
                           str(DOMAIN_BUDGET), str(HOSTS), str(ROUNDS), str(PER_ROUND)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == -9, proc.stderr


@pytest.mark.parametrize("fold_entries", [1 << 16, 2 * HOSTS + 1], ids=["log-only", "folded-mid-way"])
def test_a_kill_9_with_counts_only_in_the_log_exceeds_no_budget_after_the_restart(tmp_path, fold_entries):
    _start_then_kill(tmp_path, fold_entries)
    c = _engine(tmp_path)
    assert _log_items(c) > 0  # the last commits' counts were in the log, not the table, at the kill
    committed = _admitted_by_host(c)
    # each host's count is what its last commit admitted (the uncommitted round lost with the kill)
    assert {o: h.admitted for o, h in c.frontier.origins.items()} == committed
    assert set(committed.values()) == {1 + ROUNDS * PER_ROUND}
    # more links than either budget holds, in several commits
    for r in range(10, 20):
        c.frontier.discover_links([f"http://{site}{h}.{domain}/r{r}/{k}" for site, domain in SITES
                                   for h in range(HOSTS) for k in range(PER_ROUND)], depth=1)
        c.commit()
    after = _admitted_by_host(c)
    assert {n for o, n in after.items() if o.startswith("http://a")} == {BUDGET}  # --max-pages: reached, not exceeded
    assert max(after.values()) <= BUDGET
    # --max-pages-per-domain: reached, not exceeded
    assert sum(n for o, n in after.items() if o.endswith(".dom.test")) == DOMAIN_BUDGET
    assert {o: h.admitted for o, h in c.frontier.origins.items()} == after
    c.close()


def test_a_clean_stop_folds_the_log_into_the_hosts_table(tmp_path):
    _start_then_kill(tmp_path, 1 << 16)
    c = _engine(tmp_path)
    assert _log_items(c) > 0
    c.close()
    c = _engine(tmp_path)
    assert _log_items(c) == 0
    assert _table_counts(c) == _admitted_by_host(c)  # what the last WRECK, which reads only the table, finds
    c.close()
