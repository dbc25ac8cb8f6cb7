# Export benchmark: how fast wreck-dump writes a store out as WARC, Parquet,
# CDXJ and WACZ, and how big each is next to the store itself.
#
# A store is filled in-process (the real StoreServer, group commit) with
# realistic 20-60 KB HTML responses (tests/web/corpus.py); then each export
# runs as the command a user types, one after the other, and is measured in
# CPU-seconds of the child (the machine is shared: wall time is shown but
# is noisy) and documents per CPU-second, with its peak RSS. Sizes: the LMDB
# file, the store's compressed document bytes, and each output file.
"""python -m bench.export_bench [--docs N]"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver.reader import read_counters

from tests.store_helpers import filled_store
from tests.web.corpus import Corpus

BATCH = 200  # records sent before waiting for their acks


def fill(data: Path, docs: int) -> None:
    corpus = Corpus()
    for start in range(1, docs + 1, BATCH):
        filled_store(data, [Record(i, True, Specific.OK, http_enum(200), 50, corpus.url(i), None, corpus.response(i))
                            for i in range(start, min(start + BATCH, docs + 1))])  # fmt: skip


# Runs one command and prints its peak RSS (KiB): a fresh parent per command,
# since RUSAGE_CHILDREN keeps the largest child seen so far.
PEAK = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, capture_output=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def measure(cmd: list[str], cwd: Path) -> tuple[float, float, float]:
    """(CPU-seconds, wall seconds, peak RSS in MB) of one command run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", PEAK, *cmd], cwd=cwd, check=True, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)  # the wrapper's own CPU is small
    return cpu, wall, int(done.stdout.split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=2000)
    args = parser.parse_args()
    dump = str(Path(sys.executable).parent / "wreck-dump")
    with tempfile.TemporaryDirectory(prefix="wreck-export-bench-") as tmp:
        root = Path(tmp)
        fill(root / "store", args.docs)
        counters = read_counters(root / "store")
        lmdb_bytes = (root / "store/store/data.mdb").stat().st_size
        print(f"{args.docs} documents, {counters.raw_bytes / 1e6:.1f} MB raw; store: {counters.stored_bytes / 1e6:.1f} MB "
              f"compressed documents, data.mdb {lmdb_bytes / 1e6:.1f} MB")  # fmt: skip
        runs = [
            ("WARC (gzip per record)", [dump, "--all", "--warc", "crawl.warc.gz", "--data", "store"], "crawl.warc.gz"),
            ("CDXJ of that WARC", [dump, "--cdxj", "crawl.warc.gz"], "crawl.cdxj"),
            ("Parquet (text, no bodies)", [dump, "--all", "--parquet", "crawl.parquet", "--data", "store"], "crawl.parquet"),
            ("Parquet --bodies", [dump, "--all", "--parquet", "bodies.parquet", "--bodies", "--data", "store"], "bodies.parquet"),
            ("WACZ (WARC + CDXJ + pages)", [dump, "--all", "--wacz", "crawl.wacz", "--data", "store"], "crawl.wacz"),
        ]
        print(f"{'export':30} {'CPU s':>7} {'wall s':>7} {'docs/CPU s':>11} {'MB':>7} {'x store':>8} {'peak RSS MB':>12}")
        for name, cmd, out in runs:
            cpu, wall, peak = measure(cmd, root)
            size = (root / out).stat().st_size
            print(f"{name:30} {cpu:7.2f} {wall:7.2f} {args.docs / cpu:11.0f} {size / 1e6:7.1f} "
                  f"{size / counters.stored_bytes:8.2f} {peak:12.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
