# What a page's compression costs a spider worker (spider/docpack.py) and
# what it buys, per zstd setting: `python -m bench.docpack_bench`.
#
# Documents are response headers (an nginx-like block) plus a page's bytes,
# read from disk: the crawl bench's generated web (--web: its www/ tree, made
# by `python -m bench.crawl` in its --work) and real documentation trees
# written by others (--real DIR, repeatable: bench/realdocs.py's TREES). As
# the store does (storeserver/compress.py), a 1 MiB dictionary is trained
# from the first DICT_TRAIN_DOCS documents in a shuffled order (a crawl
# interleaves hosts), each cut to DICT_SAMPLE_BYTES; every setting then
# compresses the documents the dictionary never saw (the library's
# ZstdCompressor, which copies the dictionary's tables for a page over 16 KB,
# and bench/zstdattach.py's DictCompressor, which attaches them), timed in
# CPU seconds of this thread (time.thread_time); the ratio is raw bytes over
# frame bytes.
# The body's SHA-256 (DIGEST, docs/protocol.txt 6.7), the '<' count
# (htmlguard) and a decompression are timed beside it, as the other
# whole-body passes of a page.
"""python -m bench.docpack_bench [--web DIR] [--real DIR ...] [--docs N] [--save TAG]"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import random
import time
from pathlib import Path

import zstandard as zstd

from wreck.storeserver import compress as C
from wreck.storeserver import settings as S
from bench.zstdattach import DictCompressor

RESULTS = Path(__file__).parent / "results"
HEAD = (b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 24 Nov 2026 15:40:00 GMT\r\n"
        b"Content-Type: text/html\r\nContent-Length: %d\r\nLast-Modified: Tue, 24 Nov 2026 12:00:00 GMT\r\n"
        b"Connection: keep-alive\r\nETag: \"6743%x\"\r\nAccept-Ranges: bytes\r\n\r\n")


def documents(roots: list[Path], limit: int, seed: int = 7) -> list[bytes]:
    """Up to `limit` HTML files under `roots` as response documents, shuffled."""
    paths = [Path(top) / f for root in roots for top, _d, files in os.walk(root) for f in files
             if f.endswith((".html", ".htm"))]
    rng = random.Random(seed)
    rng.shuffle(paths)
    docs = []
    for p in paths[:limit]:
        body = p.read_bytes()
        docs.append(HEAD % (len(body), len(body)) + body)
    return docs


def train(docs: list[bytes]) -> bytes:
    samples = [d[: S.DICT_SAMPLE_BYTES] for d in docs]
    d = zstd.train_dictionary(S.DICT_SIZE, samples, k=C._TRAIN_K, d=C._TRAIN_D, accel=C._TRAIN_ACCEL, threads=1)
    return d.as_bytes()


def settings(dict_data: bytes) -> dict[str, object]:
    """The compressors compared: name -> a compressor (its .compress(bytes) -> frame)."""

    def with_dict(level: int, *, precompute: bool = False, checksum: bool = True, **params) -> zstd.ZstdCompressor:
        d = zstd.ZstdCompressionDict(dict_data)
        if precompute:
            d.precompute_compress(level=level)
        if params:
            cp = zstd.ZstdCompressionParameters.from_level(level, write_checksum=checksum, write_content_size=True,
                                                          **params)
            return zstd.ZstdCompressor(dict_data=d, compression_params=cp)
        return zstd.ZstdCompressor(level=level, dict_data=d, write_checksum=checksum, write_content_size=True)

    out = {}
    for level in (-5, -1, 1, 2, 3):
        out[f"dict level {level}"] = with_dict(level)
    for level in (1, 3):
        out[f"dict level {level} precomputed"] = with_dict(level, precompute=True)
    for level in (1, 2, 3):
        out[f"dict level {level} attached"] = DictCompressor(level, dict_data)
    out["dict level 3 no checksum"] = with_dict(3, checksum=False)
    out["dict level 3 window 2^17"] = with_dict(3, window_log=17)
    out["dict level 3 hash 2^15 chain 2^15"] = with_dict(3, hash_log=15, chain_log=15)
    out["dict level 3 strategy fast"] = with_dict(3, strategy=zstd.STRATEGY_FAST)
    out["no dict level 3"] = zstd.ZstdCompressor(level=3, write_checksum=True, write_content_size=True)
    return out


def timed(fn, docs: list[bytes]) -> tuple[float, list]:
    """One pass of fn over every doc: CPU-us a document, and the outputs."""
    t0 = time.thread_time()
    outs = [fn(d) for d in docs]
    return (time.thread_time() - t0) / len(docs) * 1e6, outs


def measure(name: str, docs: list[bytes], rounds: int, only: str = "") -> dict:
    """Every setting over the documents the dictionary never saw, `rounds`
    times, the settings interleaved within each round (the machine's load
    changes over a run: each setting sees every part of it); the best round
    of each is kept."""
    trained, rest = docs[: S.DICT_TRAIN_DOCS], docs[S.DICT_TRAIN_DOCS:]
    if len(rest) < 100:
        raise SystemExit(f"{name}: {len(docs)} documents, need more than {S.DICT_TRAIN_DOCS}")
    t0 = time.process_time()
    dict_data = train(trained)
    raw = sum(map(len, rest))
    row: dict = {"docs": len(rest), "mean_bytes": raw // len(rest), "train_cpu_s": round(time.process_time() - t0, 2)}
    passes = {label: cctx.compress for label, cctx in settings(dict_data).items() if only in label}
    passes["sha256 body"] = lambda d: hashlib.sha256(memoryview(d)[300:]).digest()
    passes["count '<'"] = lambda d: d.count(b"<")
    best = dict.fromkeys(passes, float("inf"))
    outputs: dict[str, list] = {}
    for label, fn in passes.items():
        fn(rest[0])  # the first use loads the dictionary
    for _ in range(rounds):
        for label, fn in passes.items():
            us, outputs[label] = timed(fn, rest)
            best[label] = min(best[label], us)
    with_dict = zstd.ZstdDecompressor(dict_data=zstd.ZstdCompressionDict(dict_data))
    for label, us in best.items():
        row[label] = {"cpu_us_per_doc": round(us, 1)}
        line = f"{name:6} {label:36} {us:7.1f} us/doc"
        if label.startswith(("dict", "no dict")):
            frames = outputs[label]
            dus, _ = timed((zstd.ZstdDecompressor() if label.startswith("no dict") else with_dict).decompress, frames)
            row[label] |= {"ratio": round(raw / sum(map(len, frames)), 3), "decompress_us_per_doc": round(dus, 1)}
            line += f"  ratio {row[label]['ratio']:6.3f}  decompress {dus:5.1f} us"
        print(line, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--web", type=Path, help="a generated bench web (its directory holding www/)")
    parser.add_argument("--real", type=Path, action="append", default=[], help="a tree of real HTML (repeatable)")
    parser.add_argument("--docs", type=int, default=6000, help="documents per corpus, the first 2,000 train")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes per setting, interleaved (the best is kept)")
    parser.add_argument("--only", default="", help="only the settings whose name holds this")
    parser.add_argument("--save", default="", help="write bench/results/<date>-<TAG>.json")
    opts = parser.parse_args()
    corpora = {}
    if opts.web:
        corpora["web"] = [opts.web / "www"]
    if opts.real:
        corpora["real"] = opts.real
    results = {"zstd": zstd.ZSTD_VERSION, "corpora": {}}
    for name, roots in corpora.items():
        results["corpora"][name] = measure(name, documents(roots, opts.docs), opts.rounds, opts.only)
    if opts.save:
        path = RESULTS / f"{datetime.date.today()}-{opts.save}.json"
        path.write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
