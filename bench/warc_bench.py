# WARC output benchmark (`make bench-warc`): what --warc-dir costs the store
# and how fast WARC files are written, and WARC bytes against LMDB bytes.
#
# The real `storeserver` (fsync on) ingests the same realistic HTML responses
# (tests/web/corpus.py, 20-60 KB, each with a request as a spider keeps it,
# its address and 30 outlinks) twice, alternately without and with
# --warc-dir, from 4 senders as in bench/store_bench.py. Measured: documents
# acknowledged per second (the WARC thread is off the ack path), the time
# until the WARC writer has written the last document (documents/s written
# to WARC during the ingest), the server's CPU-seconds, then
# `wreck-dump --all --warc` of the same store (documents/s of an export after
# the fact) and the bytes: LMDB data.mdb, WARC files, and the export. The
# summary gives the writer's CPU-ms a document (the server's CPU with
# --warc-dir less without, run by run) and the export's (its whole process,
# start-up included). `--label NAME` saves to bench/results/DATE-NAME.json,
# to keep a before and an after side by side.
"""python -m bench.warc_bench [--docs N] [--runs R] [--label NAME]"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver import layout as L
from wreck.storeserver.store import ReadStore, store_path
from wreck.storeserver.warcdir import WarcPosition

from bench.store_bench import cpu_seconds, save, start_senders, start_server
from tests.web.corpus import Corpus

OUTLINKS = 30
UA = "WRECK/0.1 (+https://example.org/bot; bot@example.org)"


def records(corpus: list[bytes], urls: list[str]) -> list[Record]:
    out = []
    for i, (doc, url) in enumerate(zip(corpus, urls)):
        path = "/" + url.split("/", 3)[3]
        host = url.split("/")[2]
        request = (f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {UA}\r\nAccept: text/html,*/*;q=0.8\r\n"
                   "Accept-Encoding: deflate, gzip, br, zstd\r\n\r\n").encode()
        links = tuple(f"{url.rstrip('/')}/link/{k}" for k in range(OUTLINKS))
        out.append(Record(i + 1, True, Specific.OK, http_enum(200), 100 + i % 400, url, None, doc,
                          request=request, ip="127.0.0.1", outlinks=links))
    return out


def warc_seq(data: Path) -> int:
    """The last journal sequence the WARC writer recorded as written."""
    store = ReadStore(data)
    try:
        raw = store.meta_value(L.META_WARC_POS)
        return msgspec.msgpack.decode(raw, type=WarcPosition).seq if raw else 0
    finally:
        store.close()


def ingest(recs: list[Record], warc: bool) -> dict:
    work = Path(tempfile.mkdtemp(prefix="wreck-warc-bench-", dir=os.environ.get("BENCH_DIR")))
    data, warcs = work / "data", work / "warcs"
    proc, port = start_server(data, *(["--warc-dir", str(warcs)] if warc else []))
    try:
        threads, ready = start_senders(port, recs)
        cpu0 = cpu_seconds(proc.pid)
        t0 = time.perf_counter()
        ready.set()
        for t in threads:
            t.join()
        acked_s = time.perf_counter() - t0
        out = {"docs": len(recs), "warc_dir": warc, "acked_s": round(acked_s, 3),
               "acked_docs_per_s": round(len(recs) / acked_s)}
        if warc:
            while warc_seq(data) < len(recs):  # the writer follows the commits
                time.sleep(0.02)
            written_s = time.perf_counter() - t0
            out.update(warc_written_s=round(written_s, 3), warc_docs_per_s=round(len(recs) / written_s))
        out["server_cpu_s"] = round(cpu_seconds(proc.pid) - cpu0, 2)
        proc.terminate()
        proc.wait(60)
        out["lmdb_bytes"] = (store_path(data) / "data.mdb").stat().st_size
        store = ReadStore(data)
        info = store.meta_info()
        store.close()
        out["lmdb_stored_bytes"] = info["stored_bytes"]
        out["raw_bytes"] = info["raw_bytes"]
        if warc:
            files = sorted(warcs.iterdir())
            out["warc_files"] = len(files)
            out["warc_bytes"] = sum(f.stat().st_size for f in files)
        else:
            t1, c1 = time.perf_counter(), os.times()
            dump = subprocess.run([sys.executable, "-m", "wreck.storeserver.dump", "--all", "--warc",
                                   str(work / "export.warc.gz"), "--data", str(data)], capture_output=True, text=True)
            assert dump.returncode == 0, dump.stderr
            export_s = time.perf_counter() - t1
            c2 = os.times()
            out.update(export_s=round(export_s, 3), export_docs_per_s=round(len(recs) / export_s),
                       export_cpu_s=round(c2.children_user + c2.children_system - c1.children_user - c1.children_system, 2),
                       export_bytes=(work / "export.warc.gz").stat().st_size)
        return out
    finally:
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=10000, help="documents ingested per run (default 10000)")
    ap.add_argument("--runs", type=int, default=2, help="runs of each kind, alternated (default 2)")
    ap.add_argument("--label", default="warc", help="results file name: bench/results/DATE-LABEL.json")
    args = ap.parse_args()
    corpus = Corpus(sites=40)
    recs = records([corpus.response(i) for i in range(args.docs)], [corpus.url(i) for i in range(args.docs)])
    runs = []
    for _ in range(args.runs):
        for warc in (False, True):
            runs.append(ingest(recs, warc))
            print(json.dumps(runs[-1]), file=sys.stderr)
    result = {"bench": "warc", "date": datetime.date.today().isoformat(),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}, "runs": runs,
              "summary": summary(runs, args.docs)}
    save(result, args.label)


def summary(runs: list[dict], docs: int) -> dict:
    """Per-document figures of alternated runs (without, with --warc-dir, ...)."""
    without, with_dir = [r for r in runs if not r["warc_dir"]], [r for r in runs if r["warc_dir"]]
    return {
        "writer_cpu_ms_per_doc": [round((w["server_cpu_s"] - o["server_cpu_s"]) * 1000 / docs, 2)
                                  for w, o in zip(with_dir, without)],
        "warc_docs_per_s_during_ingest": [r["warc_docs_per_s"] for r in with_dir],
        "export_cpu_ms_per_doc": [round(r["export_cpu_s"] * 1000 / docs, 2) for r in without],
        "export_docs_per_s": [r["export_docs_per_s"] for r in without],
        "warc_bytes_per_lmdb_byte": [round(r["warc_bytes"] / r["lmdb_bytes"], 3) for r in with_dir],
    }  # fmt: skip


if __name__ == "__main__":
    main()
