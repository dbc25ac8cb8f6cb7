# What recording a URL no spider may fetch costs the urlserver (issue 18,
# docs/protocol.txt 5.3 nofetch=): N URLs of a host whose name does not
# resolve, ended by the engine alone (drained: a spider without caps=record)
# or each handed out as a record-only transaction and its DONE applied
# (recorded: caps=record), in one process, side by side. CPU seconds of this
# process (the machine is shared: compare within one run); the spider's and
# the store's share is that of any failed fetch's record (no document).
#
#   .venv/bin/python -m bench.unfetched_bench [--urls 5000] [--rounds 3]
"""CPU-us per URL of a host without an address: drained against recorded."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from wreck.protocol import Done, Specific, Status
from wreck.protocol.handshake import CAP_RECORD
from wreck.urlserver.dns import Resolution
from wreck.urlserver.errorkind import ErrorKind
from tests.urlserver_helpers import crawl_engine

NXDOMAIN = Resolution(None, "dns: NXDOMAIN", 1e12, terminal=True, kind=ErrorKind.DNS_NXDOMAIN)


def one_run(urls: int, caps: frozenset[str]) -> tuple[float, int]:
    """CPU seconds to end `urls` URLs of an NXDOMAIN host, and the record-only handouts made."""
    with tempfile.TemporaryDirectory() as tmp:
        c = crawl_engine(Path(tmp), scope="any")
        for i in range(urls):
            c.add_seed(f"http://nx.test/{i}")
        c.commit()
        c.take("bench", 0.0, caps)  # its name is looked up first
        for host in c.dns_requests():
            c.dns_result(host, NXDOMAIN, 0.0)
        t0 = time.process_time()
        handed = 0
        while (a := c.take("bench", 0.0, caps)) is not None:
            c.done("bench", Done(a.trans_id, Status.ERROR, 0, Specific.DNS_FAILED, 0, reason="dns: NXDOMAIN"), 0.0)
            handed += 1
        c.commit()
        cpu = time.process_time() - t0
        assert c.frontier.counts["ERROR"] == urls
        c.close()
        return cpu, handed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--urls", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=3, help="best of this many runs of each")
    args = p.parse_args()
    for name, caps in (("drained", frozenset()), ("recorded", frozenset({CAP_RECORD}))):
        runs = [one_run(args.urls, caps) for _ in range(args.rounds)]
        cpu, handed = min(runs)
        print(f"{name:>8}: {args.urls} URLs, {handed} record-only handouts, best {cpu:.3f} CPU-s, "
              f"{cpu / args.urls * 1e6:.0f} CPU-us per URL")


if __name__ == "__main__":
    main()
