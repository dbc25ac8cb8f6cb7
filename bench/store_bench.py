# Store ingest and compression benchmark (`make bench-store`).
#
# Ingest: the real `storeserver` command (fsync on, group commit) on a fresh
# data directory; 4 concurrent senders, each a thread with its own TCP
# connection, stream realistic 20-60 KB HTML responses (tests/web/corpus.py)
# keeping a window of records in flight, as spiders do. Measured from the
# first byte sent to the last ack: documents/s and MB/s of document data,
# and the CPU-ms per document of the store and of the senders. Run twice:
# over loopback TCP, and over the store's Unix-domain socket (--unix,
# docs/protocol.txt 6.6), as a spider on the store's machine sends.
# Then both again with the senders compressing as spiders do (docs/protocol.txt
# 6.7: caps=zstd, the store's dictionary once it is trained, each document
# sent as the store's zstd frame with its body hash): their CPU for that is
# measured per thread and reported apart (senders_pack_cpu_ms_per_doc).
# And once more as the store box sees spiders on other boxes (mode
# ingest_prepacked): a warm-up connection sends raw documents (not counted)
# until the store gives its trained dictionary; then the senders compress
# every document before the clock starts, so the timed docs/s is what the
# store box itself ingests with fsync on -- it includes the store's decode,
# frame checks, LMDB writes and fsyncs, and the senders' socket writes and
# ack reads on the same cores; it excludes zstd and the body hash, which run
# on the spiders' boxes.
#
# Compression: on documents the dictionary never saw, per document:
# zstd with the dictionary trained from the first documents (as the store
# does), plain zstd at the same level, and gzip -6 (what a WARC.gz holds:
# one gzip member per record). `--html-dir` adds a corpus of real HTML files.
#
# `--store-path 32,512`: no server, one thread; the CPU a crawl-like record
# costs at each stage of the store's path (decode, submit, _prepare, the
# commit with its fsyncs, the acks) in commits of each size, so a change to
# one stage is measured apart from the load of a shared machine.
"""python -m bench.store_bench [--docs N] [--modes M,...] [--window N] [--html-dir DIR] [--store-path N,...]"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import zstandard as zstd

from wreck.protocol import NEED_DATA, Ack, Dictionary, Ready, Record, Role, Specific, StoreConnection, http_enum
from wreck.protocol.store import ZSTD_CAP
from wreck.spider.docpack import Packer
from wreck.storeserver import settings as S
from wreck.storeserver.compress import Compressor

from tests.web.corpus import Corpus

SENDERS = 4
# Records in flight per sender (--window). A spider worker's records awaiting
# their ack count against its concurrency window (spider/urlclient.py,
# default 200), not one at a time; a sender's window caps how many records
# one commit can take from it.
WINDOW = 64


def start_server(data: Path, *extra: str, tree: Path | None = None) -> tuple[subprocess.Popen, int]:
    """The storeserver of this checkout, or of another one (`tree`, with its own .venv)."""
    python = str(tree / ".venv" / "bin" / "python") if tree is not None else sys.executable
    cmd = [python, "-m", "storeserver", "--data", str(data), "--listen", "127.0.0.1:0", "--log-level", "warning",
           *extra]
    # The port is only logged at info level: ask for it with a fixed free port instead.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd[cmd.index("127.0.0.1:0")] = f"127.0.0.1:{port}"
    proc = subprocess.Popen(cmd, cwd=tree)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("storeserver did not start")


def sender(port: int, records: list[Record], out: dict) -> None:
    if out["unix"]:
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(out["unix"])
    else:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pack, prepack = out["pack"], out["prepack"]
    conn, next_event = handshake(sock, zstd_cap=pack or prepack)
    # Raw: encoded before the clock starts. Packed: encoded as they go, raw
    # until the store gives its dictionary, then compressed as a spider would.
    # Prepacked: the store has its dictionary already (given after WELCOME);
    # compressed and encoded before the clock starts, as on a spider's box.
    packer: Packer | None = None
    pack_cpu = 0.0
    if prepack:
        while type(event := next_event()) is not Dictionary:
            pass
        packer = Packer(event)
        t0 = time.thread_time()
        frames = [conn.send(packer.pack(r)) for r in records]
        pack_cpu = time.thread_time() - t0
    else:
        frames = None if pack else [conn.send(r) for r in records]
    out["prepared"].release()
    out["ready"].wait()
    sent = acked = 0
    sent_at: dict[int, float] = {}  # doc id -> when its record was written, for its ack's latency
    latencies = []
    while acked < len(records):
        if sent < len(records) and sent - acked < out["window"]:
            upto = min(len(records), acked + out["window"])
            if pack:
                t0 = time.thread_time()
                chunk = [conn.send(packer.pack(r) if packer is not None else r) for r in records[sent:upto]]
                pack_cpu += time.thread_time() - t0
            else:
                chunk = frames[sent:upto]
            sock.sendall(b"".join(chunk))
            now = time.perf_counter()
            sent_at.update((r.doc_id, now) for r in records[sent:upto])
            sent = upto
        event = next_event()
        if type(event) is Ack:
            acked += 1
            latencies.append(time.perf_counter() - sent_at.pop(event.doc_id))
        elif type(event) is Dictionary:
            packer = Packer(event)
    sock.close()
    with out["lock"]:
        out["pack_cpu"] += pack_cpu
        out["packed"] += packer is not None
        out["latencies"].extend(latencies)


def handshake(sock: socket.socket, *, zstd_cap: bool):
    """A StoreConnection authenticated over `sock` (announcing caps=zstd if
    asked), and a function returning its next event, reading as needed."""
    conn = StoreConnection(Role.CLIENT, secret=b"", nonce=os.urandom(32), name="bench",
                           caps=(ZSTD_CAP,) if zstd_cap else ())

    def next_event():
        while (event := conn.next_event()) is NEED_DATA:
            conn.receive_data(sock.recv(1 << 20))
        return event

    next_event()  # Hello
    sock.sendall(conn.authenticate())
    assert type(next_event()) is Ready
    return conn, next_event


# Warm-up documents sent before the store gives its dictionary: it trains on
# its first DICT_TRAIN_DOCS and stores the dictionary with the first document
# compressed after training (storeserver/compress.py), so a few hundred more
# follow while it trains; past this many, training has failed.
WARMUP_MAX_DOCS = 10 * S.DICT_TRAIN_DOCS


def warm_up(port: int, corpus: Corpus, first: int) -> int:
    """Send raw documents `first`, `first` + 1, ... of `corpus` (ids after
    the timed ones) until the store gives its dictionary, wait for every ack,
    and return how many were sent."""
    sock = socket.create_connection(("127.0.0.1", port))
    conn, next_event = handshake(sock, zstd_cap=True)
    sent = acked = 0
    have_dict = False
    while not have_dict or acked < sent:
        if not have_dict and sent - acked < WINDOW:
            if sent >= WARMUP_MAX_DOCS:
                raise SystemExit(f"the store gave no dictionary after {sent} documents")
            i = first + sent
            sent += 1
            record = Record(i + 1, True, Specific.OK, http_enum(200), 100, corpus.url(i), None, corpus.response(i))
            sock.sendall(conn.send(record))
            continue
        event = next_event()
        if type(event) is Ack:
            acked += 1
        elif type(event) is Dictionary:
            have_dict = True
    sock.close()
    return sent


def start_senders(port: int, records: list[Record], unix: str = "", *, pack: bool = False,
                  prepack: bool = False, window: int = WINDOW) -> tuple[list[threading.Thread], threading.Event, dict]:
    """SENDERS threads, each with its share of `records`, handshaken and
    encoded (over the Unix socket `unix` if given; compressing as spiders do
    with `pack`, or before they are released with `prepack`); they start
    sending when the returned event is set. The dict gets their compressing
    CPU seconds ("pack_cpu") and each record's ack latency ("latencies",
    seconds from its write to its ack) once they are done."""
    ready, prepared = threading.Event(), threading.Semaphore(0)
    shared = {"ready": ready, "prepared": prepared, "unix": unix, "pack": pack, "prepack": prepack, "window": window,
              "lock": threading.Lock(), "pack_cpu": 0.0, "packed": 0, "latencies": []}
    threads = [threading.Thread(target=sender, args=(port, records[k::SENDERS], shared)) for k in range(SENDERS)]
    for t in threads:
        t.start()
    for _ in threads:  # handshakes done, records encoded
        prepared.acquire()
    return threads, ready, shared


def cpu_times(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of a process, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def minor_faults(pid: int) -> int:
    """Page faults a process took without I/O: mostly fresh memory zeroed by the kernel."""
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[7])


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, all its threads."""
    return sum(cpu_times(pid))


def ingest(corpus: list[bytes], urls: list[str], *, unix: bool = False, pack: bool = False,
           prepack: Corpus | None = None, window: int = WINDOW, tree: Path | None = None) -> dict:
    """One timed ingest into a fresh store; with `prepack`, after a warm-up
    from that corpus, with every document compressed before the clock."""
    data = Path(tempfile.mkdtemp(prefix="wreck-store-bench-", dir=os.environ.get("BENCH_DIR")))
    path = str(data / "store.sock") if unix else ""
    proc, port = start_server(data, *(["--unix", path] if unix else []), tree=tree)
    try:
        warmup = warm_up(port, prepack, len(corpus)) if prepack is not None else 0
        records = [Record(i + 1, True, Specific.OK, http_enum(200), 100, urls[i], None, doc) for i, doc in enumerate(corpus)]
        threads, ready, shared = start_senders(port, records, path, pack=pack, prepack=prepack is not None,
                                               window=window)
        (server_user0, server_sys0), bench_cpu0 = cpu_times(proc.pid), sum(os.times()[:2])
        faults0 = minor_faults(proc.pid)
        # The clock starts now (a profiler of the store may start here too).
        print(f"{'unix' if unix else 'tcp'}: timed ingest of {len(corpus)} documents starts", file=sys.stderr)
        t0 = time.perf_counter()
        ready.set()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        server_user, server_sys = (now - before for now, before in zip(cpu_times(proc.pid), (server_user0, server_sys0)))
        server_cpu = server_user + server_sys
        faults = minor_faults(proc.pid) - faults0
        bench_cpu = sum(os.times()[:2]) - bench_cpu0
        proc.terminate()
        proc.wait(30)
        from wreck.storeserver.store import ReadStore

        store = ReadStore(data)
        info = store.meta_info()
        assert info["docs"] == len(corpus) + warmup, info
        store.close()
        raw = sum(map(len, corpus))
        return {
            "transport": "unix" if unix else "tcp", "server_tree": str(tree or Path(__file__).parent.parent),
            "compressed_by": "senders before the clock" if prepack else "senders" if pack else "store",
            "warmup_docs_untimed": warmup,
            "docs": len(corpus), "senders": SENDERS, "window_per_sender": window, "seconds": round(elapsed, 3),
            "docs_per_s": round(len(corpus) / elapsed), "mb_per_s": round(raw / elapsed / 1e6, 1),
            "mean_doc_kb": round(raw / len(corpus) / 1024, 1),
            "store_ratio_overall": round(info["raw_bytes"] / info["stored_bytes"], 2),
            "dict_id": info.get("dict_id", 0), "fsync": True,
            "server_cpu_s": round(server_cpu, 2), "senders_cpu_s": round(bench_cpu, 2),
            "server_cpu_ms_per_doc": round(server_cpu * 1000 / len(corpus), 3),
            # System time is the store's writes and fsyncs (LMDB's pwritev, fdatasync) and socket reads.
            "server_user_ms_per_doc": round(server_user * 1000 / len(corpus), 3),
            "server_sys_ms_per_doc": round(server_sys * 1000 / len(corpus), 3),
            "server_minor_faults_per_doc": round(faults / len(corpus), 2),
            "senders_cpu_ms_per_doc": round(bench_cpu * 1000 / len(corpus), 3),
            # With prepack, spent before the clock (on the spiders' boxes in a crawl).
            "senders_pack_cpu_ms_per_doc": round(shared["pack_cpu"] * 1000 / len(corpus), 3),
            "senders_given_the_dictionary": shared["packed"],
            # From a record's write to its ack: the commits it waited (fsync each), and its turn in the socket.
            "ack_latency_ms_median": round(statistics.median(shared["latencies"]) * 1000, 1),
            "ack_latency_ms_p90": round(statistics.quantiles(shared["latencies"], n=10)[-1] * 1000, 1),
        }  # fmt: skip
    finally:
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(data, ignore_errors=True)


def ratios(docs: list[bytes], train: int) -> dict:
    comp = Compressor(level=S.DEFAULT_ZSTD_LEVEL, dict_size=S.DICT_SIZE, train_docs=train, sample_bytes=S.DICT_SAMPLE_BYTES)
    for d in docs[:train]:
        comp.compress(d)
    comp.wait_for_training()
    new = comp.take_new_dict()
    assert new is not None, "dictionary training failed"
    comp.use_dict(*new)
    test = docs[train:]
    raw = sum(map(len, test))
    plain = zstd.ZstdCompressor(level=S.DEFAULT_ZSTD_LEVEL, write_checksum=True)
    t0 = time.perf_counter()
    with_dict = sum(len(comp.compress(d)[1]) for d in test)
    dict_mb_s = raw / (time.perf_counter() - t0) / 1e6
    zstd_plain = sum(len(plain.compress(d)) for d in test)
    gz = sum(len(gzip.compress(d, 6)) for d in test)
    return {
        "train_docs": train, "test_docs": len(test), "dict_bytes": len(new[1]),
        "ratio_zstd_dict": round(raw / with_dict, 2), "ratio_zstd_plain": round(raw / zstd_plain, 2),
        "ratio_gzip_per_doc": round(raw / gz, 2), "dict_vs_gzip": round(gz / with_dict, 2),
        "dict_vs_zstd_plain": round(zstd_plain / with_dict, 2), "zstd_dict_mb_per_s_one_core": round(dict_mb_s),
    }  # fmt: skip


def record_codec() -> dict:
    """CPU microseconds a crawl-like record (60 outlinks, request, ip, via,
    hops, a spider's frame) costs to encode (the spider) and decode (the
    store), and its fetch value: process time, best of 5."""
    import hashlib
    import timeit

    from wreck.protocol import Packed, limits
    from wreck.protocol.buffer import ReceiveBuffer
    from wreck.protocol.record import decode_record, encode_record
    from wreck.storeserver.committer import fetch_value

    links = tuple(f"http://host{j % 100}.example/p/{j * 7 % 10000}.html" for j in range(60))
    frame = random.Random(1).randbytes(6000)
    r = Record(6, True, Specific.OK, http_enum(200), 120, "http://host5.example/p/5.html", None, frame,
               request=b"GET /p/5.html HTTP/1.1\r\nHost: host5.example\r\nAccept: */*\r\n\r\n", ip="127.0.0.5",
               outlinks=links, via="http://host5.example/", hops="LL",
               packed=Packed(1, 38000, 200, hashlib.sha256(frame).digest()[:16]))
    wire = encode_record(r)

    def decode() -> object:
        buf = ReceiveBuffer()
        buf.feed(wire)
        return decode_record(buf, limits.MAX_DOC_LEN)

    runs = 5000
    cost = {name: min(timeit.repeat(fn, number=runs, repeat=5, timer=time.process_time)) / runs * 1e6
            for name, fn in (("encode_record", lambda: encode_record(r)), ("decode_record", decode),
                             ("fetch_value", lambda: fetch_value(r)))}
    return {f"{name}_cpu_us": round(us, 2) for name, us in cost.items()}


def crawl_record(doc_id: int) -> Record:
    """A crawl-like record as a spider sends it to the store once it has the
    dictionary: 60 outlinks, request, ip, via, hops, a 2 KB frame with its
    body hash (docs/protocol.txt 6.3, 6.7)."""
    import hashlib

    from wreck.protocol import Packed

    links = tuple(f"http://host{j % 100}.example/p/{(doc_id * 61 + j) * 7 % 100000}.html" for j in range(60))
    frame = random.Random(doc_id).randbytes(2000)
    return Record(doc_id, True, Specific.OK, http_enum(200), 120, f"http://host{doc_id % 100}.example/p/{doc_id}.html",
                  None, frame, request=b"GET /p/5.html HTTP/1.1\r\nHost: host5.example\r\nAccept: */*\r\n\r\n",
                  ip="127.0.0.5", outlinks=links, via="http://host5.example/", hops="LL",
                  packed=Packed(1, 38000, 200, hashlib.sha256(frame).digest()[:16]))


def store_path(batch: int, records: int = 20000) -> dict:
    """CPU microseconds (process time) a record costs at each stage of the
    store, in commits of `batch` records into a fresh store with fsync on:
    decode, submit, _prepare (compressing thread), the commit (writer
    thread: LMDB and its fsyncs), the acks. Run in one thread, so each
    stage's own CPU; the hand-offs between the threads are not in it."""
    from wreck.protocol import AckResult, limits
    from wreck.protocol.buffer import ReceiveBuffer
    from wreck.protocol.record import decode_record, encode_record
    from wreck.protocol.state import State
    from wreck.storeserver.committer import Committer
    from wreck.storeserver.store import WriteStore

    spent: dict[str, float] = {}
    stored = 0

    def timed(stage: str, fn):
        start = time.process_time()
        out = fn()
        spent[stage] = spent.get(stage, 0.0) + time.process_time() - start
        return out

    with tempfile.TemporaryDirectory(prefix="wreck-store-path-", dir=os.environ.get("BENCH_DIR")) as data:
        store = WriteStore(Path(data), map_size=1 << 32, max_growth=1 << 32)
        # Records come compressed (6.7): nothing to train a dictionary on.
        comp = Compressor(level=S.DEFAULT_ZSTD_LEVEL, dict_size=S.DICT_SIZE, train_docs=0,
                          sample_bytes=S.DICT_SAMPLE_BYTES)
        writer = Committer(store, comp, window_s=0, on_commit=lambda results: None, on_full=lambda full, text: None,
                           on_fatal=lambda exc: None, near_dups=False)
        conn = StoreConnection(Role.SERVER, secret=b"bench", nonce=bytes(32))
        conn.state, conn.opened = State.OPEN, True  # past the handshake: only the records' path is timed
        for first in range(1, records + 1, batch):
            wire = b"".join(encode_record(crawl_record(i)) for i in range(first, min(first + batch, records + 1)))

            def decode(wire=wire) -> list:
                buf = ReceiveBuffer()
                buf.feed(wire)
                out = []
                while (r := decode_record(buf, limits.MAX_DOC_LEN)) is not NEED_DATA:
                    out.append(r)
                return out

            got = timed("decode", decode)
            timed("submit", lambda: [writer.submit(r, None) for r in got])
            taken = list(writer._queue)
            writer._queue.clear()
            writer._costs.clear()
            prepared, new_dict = timed("prepare", lambda: writer._prepare(taken))
            results = timed("commit", lambda: writer._write(taken, prepared, new_dict))
            stored += sum(1 for _, _, res in results if res is AckResult.STORED)
            timed("acks", lambda: conn.send_acks([(doc_id, res) for _, doc_id, res in results]))
        writer._pool.shutdown()
        store.close()
    if stored != records:
        raise RuntimeError(f"the store path stored {stored} of {records} records")
    out = {f"{stage}_cpu_us": round(s / records * 1e6, 2) for stage, s in spent.items()}
    out["all_cpu_us"] = round(sum(spent.values()) / records * 1e6, 2)
    return {"batch": batch, "records": records, **out}


def real_html(directory: Path, limit: int) -> list[bytes]:
    files = [p for p in directory.rglob("*.htm*") if 20_000 <= p.stat().st_size <= 61_440]
    random.Random(1).shuffle(files)
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
    return [head + p.read_bytes() for p in files[:limit]]


# The ingest runs: the store compresses (over TCP, over its Unix socket), or
# the senders do, as spiders with caps=zstd (docs/protocol.txt 6.7).
MODES = {
    "ingest": {}, "ingest_unix": {"unix": True},
    "ingest_spider_frames": {"pack": True}, "ingest_spider_frames_unix": {"unix": True, "pack": True},
    "ingest_prepacked": {"prepack": True}, "ingest_prepacked_unix": {"unix": True, "prepack": True},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    # Long enough that the one-off dictionary training (about 1.3 CPU-s per
    # crawl) is amortised as in a real crawl, not most of the run.
    ap.add_argument("--docs", type=int, default=30000, help="documents ingested (default 30000)")
    ap.add_argument("--sites", type=int, default=40, help="site templates in the synthetic corpus")
    ap.add_argument("--html-dir", type=Path, action="append", default=[], help="also measure ratios on real HTML files here")
    ap.add_argument("--save", default="store", help="results file: bench/results/DATE-NAME.json (default store)")
    ap.add_argument("--modes", default=",".join(MODES), help=f"ingest runs, comma-separated, in order (default: all of "
                    f"{', '.join(MODES)}); a mode may be given twice to alternate")
    ap.add_argument("--window", type=int, default=WINDOW, help=f"records in flight per sender (default {WINDOW})")
    ap.add_argument("--no-ratios", action="store_true", help="skip the compression ratios")
    ap.add_argument("--baseline", type=Path, help="another checkout (with its .venv) whose storeserver runs each mode "
                    "too, just before this one's, on the same corpus: a before/after pair per mode")
    ap.add_argument("--codec-only", action="store_true", help="only the CPU a crawl-like record costs to encode "
                    "and decode (no store run)")
    ap.add_argument("--store-path", metavar="N,N,...", help="only the CPU a crawl-like record costs at each stage of "
                    "the store, in commits of each of these sizes (no server run; e.g. 32,512)")
    args = ap.parse_args()
    if args.codec_only:
        print(json.dumps(record_codec(), indent=2))
        return
    if args.store_path:
        print(json.dumps([store_path(int(n)) for n in args.store_path.split(",")], indent=2))
        return
    t0 = time.perf_counter()
    corpus = Corpus(sites=args.sites)
    docs = [corpus.response(i) for i in range(args.docs)]
    urls = [corpus.url(i) for i in range(args.docs)]
    print(f"corpus: {len(docs)} responses from {args.sites} sites in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    result: dict = {"date": datetime.date.today().isoformat(), "load_before": os.getloadavg()[0],
                    "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}}
    for n, mode in enumerate(args.modes.split(",")):
        options = dict(MODES[mode])
        if options.pop("prepack", False):
            options["prepack"] = corpus
        for tree in ([args.baseline] if args.baseline else []) + [None]:
            key = mode if mode not in result else f"{mode}_{n}"
            key += "_baseline" if tree is not None else ""
            result[key] = ingest(docs, urls, window=args.window, tree=tree, **options)
            print(f"{key}: {result[key]['docs_per_s']} docs/s, store {result[key]['server_cpu_ms_per_doc']} CPU-ms/doc "
                  f"(user {result[key]['server_user_ms_per_doc']}, system {result[key]['server_sys_ms_per_doc']}), "
                  f"senders {result[key]['senders_cpu_ms_per_doc']}, ack latency median "
                  f"{result[key]['ack_latency_ms_median']} ms", file=sys.stderr)
    if not args.no_ratios:
        result["compression_synthetic"] = {"sites": args.sites, **ratios(docs[:4000], S.DICT_TRAIN_DOCS)}
    for directory in args.html_dir:
        real = real_html(directory, 4000)
        if len(real) > S.DICT_TRAIN_DOCS + 200:
            result.setdefault("compression_real_html", []).append({"dir": str(directory), **ratios(real, S.DICT_TRAIN_DOCS)})
    save(result, args.save)


def save(result: dict, name: str) -> Path:
    """Write `result` to bench/results/DATE-NAME.json and print it."""
    out = Path(__file__).parent / "results" / f"{result['date']}-{name}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(f"written to {out}", file=sys.stderr)
    return out


if __name__ == "__main__":
    main()
