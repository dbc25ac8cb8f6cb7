# The CPU a urlserver partition spends on links (docs/partitions.md), on
# this machine: a page's outlinks admitted by one urlserver (M=1) and by
# partition 0 of 2 (about half of them forwarded: written to the outbox
# instead of the frontier), then another partition's batches applied by
# the receiver (Crawl.apply_links). CPU-seconds of this process, fsync off,
# no sockets: the engine alone. Run: .venv/bin/python -m bench.partition_links
"""Links per CPU-second, with and without partitions."""

from __future__ import annotations

import resource
import tempfile

from wreck.protocol import Links, PeerLink
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.partition import partition_of
from wreck.urlserver.settings import Settings

HOSTS = [f"h{i}.site{i}.com" for i in range(200)]  # 200 sites: registrable domains of their own
PAGES = 2000  # pages of LINKS links each
LINKS = 60  # the spider bench's pages have 61
COMMIT_EVERY = 50  # pages per commit, as a busy urlserver groups its DONEs
BATCHES, BATCH = 60, 1000  # batches applied by the receiver, links in each
PARTITIONED = dict(partitions=2, peers=("127.0.0.1:1", "127.0.0.1:2"), crawl_id="0" * 32)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _crawl(directory: str, **kw) -> Crawl:
    return Crawl.open(Settings(data=directory, scope="any", sync=False, delay=0.0, **kw), clock=lambda: 0.0)


def discover(partitions: int) -> tuple[float, int]:
    """Links per CPU-second through discover_links; links forwarded."""
    pages = [[f"http://{HOSTS[(p * 7 + k) % len(HOSTS)]}/p{p}-{k}" for k in range(LINKS)] for p in range(PAGES)]
    with tempfile.TemporaryDirectory() as directory:
        crawl = _crawl(directory, **(PARTITIONED | {"partition": 0} if partitions > 1 else {}))
        start = _cpu()
        for i, links in enumerate(pages):
            crawl.frontier.discover_links(links, depth=1, base="http://h0.site0.com/")
            if i % COMMIT_EVERY == COMMIT_EVERY - 1:
                crawl.commit()
        crawl.commit()
        spent = _cpu() - start
        forwarded = crawl.forward.forwarded if crawl.forward else 0
        crawl.close()
    return PAGES * LINKS / spent, forwarded


def apply() -> float:
    """Links per CPU-second applied from another partition's batches."""
    mine = [h for h in HOSTS if partition_of(h, 2) == 1]
    batches = [Links(i + 1, tuple(PeerLink(f"http://{mine[(i + k) % len(mine)]}/q{i}-{k}", 2,
                                           {"via": "http://other.example/", "path": "LL"}) for k in range(BATCH)))
               for i in range(BATCHES)]
    with tempfile.TemporaryDirectory() as directory:
        crawl = _crawl(directory, **PARTITIONED, partition=1)
        start = _cpu()
        for batch in batches:
            crawl.apply_links(0, batch, 0.0)
            crawl.commit()
        spent = _cpu() - start
        crawl.close()
    return BATCHES * BATCH / spent


def main() -> None:
    for m in (1, 2):
        rate, forwarded = discover(m)
        print(f"M={m}: {rate:,.0f} links/CPU-s through discover_links" +
              (f" ({forwarded:,} of {PAGES * LINKS:,} forwarded)" if m > 1 else ""))
    print(f"receiver: {apply():,.0f} links/CPU-s applied from batches of {BATCH}")


if __name__ == "__main__":
    main()
