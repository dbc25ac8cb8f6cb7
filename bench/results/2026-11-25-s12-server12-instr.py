# Instruction counts behind bench/results/2026-11-25-s12-server12.md: run a
# case N times under callgrind, in this tree and in a `git archive` of main,
# and subtract the `none` case (the imports and set-up):
#   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
#       .venv/bin/python bench/results/2026-11-25-s12-server12-instr.py CASE 2000
# fetch-sizes DIR prints the fetch values of a kept crawl's store (bench.crawl
# --keep) recompressed at zstd levels 1 and 3, and times them with CASE fetch-1
# or fetch-3 (DIR as the third argument), less fetch-0 (the values only read).
"""Instruction-count cases for the outlinks, DONE and fetch-value paths."""

import os
import random
import sys

sys.path.insert(0, os.getcwd())  # the tree measured: run from its top, with its .venv

import lmdb  # noqa: E402
import zstandard  # noqa: E402

from tests.protocol_helpers import open_pair  # noqa: E402
from wreck.protocol import Done, Specific, Status, textfields  # noqa: E402

random.seed(1)
LINKS100 = tuple(f"http://h{random.randrange(1000)}.wreck.test:18470/p/{random.randrange(10**6)}.html"
                 for _ in range(100))
BLOCK100 = ("\n".join(LINKS100) + "\n").encode()  # 4.3 KB
LINKS40 = tuple(f"http://h{random.randrange(1000)}.wreck.test:18470/p/{random.randrange(10**5)}.html"
                for _ in range(40))
# a DONE as the crawl bench's spiders send it: nginx's validators, the body's CRC-32
DONE = Done(12345, Status.FETCHED, 200, Specific.OK, 37, LINKS40, None, None, "",
            {"etag": '"6565f0a1-94c0"', "last_modified": "Sat,%2025%20Nov%202026%2001:00:00%20GMT",
             "digest": "1a2b3c4d"})


def fetch_values(data: str) -> list[bytes]:
    env = lmdb.open(f"{data}/store", readonly=True, max_dbs=16, lock=False)
    db, d = env.open_db(b"fetch", create=False), zstandard.ZstdDecompressor()
    with env.begin() as txn:
        return [d.decompress(v) for _, v in txn.cursor(db)]


def main() -> None:
    case = sys.argv[1]
    n = int(sys.argv[2]) if sys.argv[2].isdigit() else 0
    server, client = open_pair()
    wire = client.send(DONE)
    if case == "link_block":
        for _ in range(n):
            textfields.link_block(BLOCK100, 100)
    elif case == "done_decode":  # the urlserver's side
        for _ in range(n):
            server.receive_data(wire)
            assert server.next_event().outlinks == LINKS40
    elif case == "done_encode":  # the spider's side
        for _ in range(n):
            client.send(DONE)
    elif case == "sum_map_len":
        for _ in range(n):
            sum(map(len, LINKS40))
    elif case == "join_len":
        for _ in range(n):
            len("".join(LINKS40))
    elif case == "fetch-sizes":
        raws = fetch_values(sys.argv[2])
        print(len(raws), "values,", sum(map(len, raws)) / len(raws), "bytes raw on average")
        for level in (1, 3):
            c = zstandard.ZstdCompressor(level=level)
            print("level", level, sum(len(c.compress(r)) for r in raws) / len(raws), "bytes on average")
    elif case in ("fetch-0", "fetch-1", "fetch-3"):  # fetch-0: the values read, none compressed
        values = fetch_values(sys.argv[3])[:n]
        if case != "fetch-0":
            c = zstandard.ZstdCompressor(level=int(case[-1]))
            for r in values:
                c.compress(r)
    elif case != "none":
        raise SystemExit(f"unknown case {case}")


if __name__ == "__main__":
    main()
