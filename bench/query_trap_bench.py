# `python -m bench.query_trap_bench`: what --max-query-repeats costs the
# urlserver's admission of a page's new links (Frontier.discover_links, the
# column path), the rule on (3) against off (0), alternated in one process:
# CPU microseconds per page of 100 new links, for links without a query
# ('plain', as the bench web's), with two '&' each ('query2': the page's
# total passes the join-and-count test, no link does), and with three
# ('query3': every link's parameter names are read). Each round opens a
# fresh engine in a temporary directory (no fsync), so the LMDB writes of
# the new URLs are in the figure: the rule's share is what it adds to them.
"""Micro-benchmark of the repeated-query-parameter rule in the frontier."""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tests.urlserver_helpers import crawl_engine

LINKS = 100  # links a page: about the bench web's
HOSTS = 7
KINDS = {
    "plain": lambda page, i: f"http://h{i % HOSTS}.wreck.test:18611/p-{page}-{i}.html",
    "query2": lambda page, i: f"http://h{i % HOSTS}.wreck.test:18611/list?page={page}&item={i}&sort=asc",
    "query3": lambda page, i: f"http://h{i % HOSTS}.wreck.test:18611/list?page={page}&item={i}&sort=asc&lang=en",
}


def per_page(kind: str, bound: int, pages: int) -> float:
    """CPU microseconds per page of LINKS new links of `kind`."""
    with tempfile.TemporaryDirectory(prefix="query-trap-bench-") as tmp:
        crawl = crawl_engine(Path(tmp), scope="any", max_query_repeats=bound)
        for h in range(HOSTS):
            crawl.add_seed(f"http://h{h}.wreck.test:18611/")
        make, frontier = KINDS[kind], crawl.frontier
        start = time.process_time()
        for page in range(pages):
            frontier.discover_links([make(page, i) for i in range(LINKS)], depth=1,
                                    base="http://h0.wreck.test:18611/")
        spent = time.process_time() - start
        crawl.close()
    return spent / pages * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=300, help="pages a round")
    parser.add_argument("--rounds", type=int, default=6, help="rounds a kind, the order alternated")
    args = parser.parse_args()
    for kind in KINDS:
        got: dict[int, list[float]] = {3: [], 0: []}
        for r in range(args.rounds):
            for bound in (3, 0) if r % 2 == 0 else (0, 3):
                got[bound].append(per_page(kind, bound, args.pages))
        on, off = statistics.median(got[3]), statistics.median(got[0])
        print(f"{kind:7s} rule on {on:6.0f} us/page  off {off:6.0f} us/page  on/off {on / off:.3f}  "
              f"(on {[round(x) for x in got[3]]}, off {[round(x) for x in got[0]]})")


if __name__ == "__main__":
    main()
