# What each WARC record's gzip member costs, by compressor and level
# (`make bench-warc`'s companion): the records of N realistic captures
# (bench/warc_bench.py's, stored and loaded back as the writer does) are
# serialized once by warcio, then each compressed alone, one gzip member a
# record (storeserver/warc.py), by zlib (warcio's own, level 9), libdeflate
# (the `deflate` package, which WRECK uses), and, measured only, zlib-ng and
# ISA-L. Reported: CPU-ms a capture and bytes against the uncompressed records.
"""python -m bench.warc_gzip_bench [--docs N]"""

from __future__ import annotations

import argparse
import datetime
import importlib
import itertools
import os
import platform
import tempfile
import time
import zlib
from pathlib import Path

import deflate

from bench.store_bench import save
from bench.warc_bench import records
from tests.store_helpers import filled_store
from tests.web.corpus import Corpus
from wreck.storeserver.store import ReadStore
from wreck.storeserver.warc import MemberCompressor, crawl_key, load_capture
from wreck.storeserver.warcrecords import RecordMaker

FILL_CHUNK = 500  # records sent to the store at a time


def _stream(module, level: int):
    def member(data: bytes) -> bytes:
        z = module.compressobj(level, module.DEFLATED, 31)  # 31: a gzip header and trailer
        return z.compress(data) + z.flush()

    return member


def compressors() -> dict:
    out = {f"zlib {level}": _stream(zlib, level) for level in (9, 6, 1)}
    out.update({f"libdeflate {level}": (lambda data, level=level: deflate.gzip_compress(data, level))
                for level in (9, 6, 4, 1)})  # fmt: skip
    for name, module, levels in (("zlib-ng", "zlib_ng.zlib_ng", (9, 6, 1)), ("isal", "isal.isal_zlib", (3, 2, 1))):
        try:
            mod = importlib.import_module(module)
        except ImportError:  # measured only when installed (pip install -e '.[bench]')
            continue
        out.update({f"{name} {level}": _stream(mod, level) for level in levels})
    return out


def blobs_of(docs: int) -> list[bytes]:
    corpus = Corpus(sites=40)
    recs = records([corpus.response(i) for i in range(docs)], [corpus.url(i) for i in range(docs)])
    with tempfile.TemporaryDirectory(prefix="wreck-gzip-bench-", dir=os.environ.get("BENCH_DIR")) as tmp:
        for start in range(0, docs, FILL_CHUNK):
            filled_store(Path(tmp), recs[start : start + FILL_CHUNK])
        store = ReadStore(Path(tmp))
        maker, plain = RecordMaker(crawl_key(store)), MemberCompressor(1)
        try:
            return [plain.serialize(r) for _, d in itertools.islice(store.iter_journal(0), docs)
                    for r in maker.records(load_capture(store, d))]  # fmt: skip
        finally:
            plain.close()
            store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=2000, help="captures (default 2000)")
    args = ap.parse_args()
    blobs = blobs_of(args.docs)
    raw = sum(map(len, blobs))
    rows = []
    for name, member in compressors().items():
        t = time.process_time()
        size = sum(len(member(b)) for b in blobs)
        cpu = time.process_time() - t
        rows.append({"compressor": name, "cpu_ms_per_doc": round(cpu * 1000 / args.docs, 3),
                     "bytes": size, "of_uncompressed": round(size / raw, 4)})  # fmt: skip
        print(rows[-1])
    save({"bench": "warc-gzip", "date": datetime.date.today().isoformat(), "docs": args.docs,
          "uncompressed_bytes": raw, "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
          "rows": rows}, "warc-gzip")  # fmt: skip


if __name__ == "__main__":
    main()
