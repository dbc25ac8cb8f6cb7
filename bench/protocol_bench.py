# Encode and decode rates of the wire formats on one core, measured the way
# the daemons use them: messages encoded back to back into socket-sized
# writes, each fed whole to the peer's decoder. Run: python -m bench.protocol_bench
"""Protocol codec throughput: assignments, DONE with 100 outlinks, 30 KB records."""

from __future__ import annotations

import json
import platform
import random
import sys
import time
from datetime import date
from pathlib import Path

from wreck.protocol import NEED_DATA, Assignment, Done, Get, Record, Specific, Status, http_enum, limits
from tests.protocol_helpers import open_pair, open_store_pair

READ_SIZE = 256 * 1024  # a large socket read under load
RESULTS = Path(__file__).parent / "results"
TARGETS = {"records_decoded_per_s": 200_000, "done100_decoded_per_s": 20_000}


def _measure(sender, receiver, events) -> dict:
    """Encode and decode in socket-sized batches, as a daemon streams them,
    so buffers are reused instead of the whole run sitting in memory."""
    encode_s = decode_s = 0.0
    total_bytes = decoded = 0
    clock = time.perf_counter
    pos = 0
    while pos < len(events):
        t0 = clock()
        parts, size = [], 0
        while pos < len(events) and size < READ_SIZE:
            part = sender.send(events[pos])
            parts.append(part)
            size += len(part)
            pos += 1
        data = b"".join(parts)
        t1 = clock()
        receiver.receive_data(data)
        while receiver.next_event() is not NEED_DATA:
            decoded += 1
        t2 = clock()
        encode_s += t1 - t0
        decode_s += t2 - t1
        total_bytes += len(data)
    assert decoded == len(events), (decoded, len(events))
    n = len(events)
    return {
        "messages": n,
        "bytes": total_bytes,
        "encoded_per_s": round(n / encode_s),
        "decoded_per_s": round(n / decode_s),
        "round_trip_per_s": round(n / (encode_s + decode_s)),
        "decode_MB_per_s": round(total_bytes / decode_s / 1e6, 1),
    }


def bench_assignments(n: int) -> dict:
    server, client = open_pair()
    for _ in range(n // limits.MAX_GET + 1):
        if client.credit + limits.MAX_GET <= limits.MAX_CREDIT:
            server.receive_data(client.send(Get(limits.MAX_GET)))
    while server.next_event() is not NEED_DATA:
        pass
    events = [
        Assignment(i, i, f"127.0.{i % 250}.{i % 200 + 1}", f"h{i % 1000}.wreck.test",
                   f"http://h{i % 1000}.wreck.test/section/{i % 97}/page-{i}.html")
        for i in range(n)
    ]  # fmt: skip
    return _measure(server, client, events)


def bench_done(n: int, links: int = 100) -> dict:
    server, client = open_pair()
    rnd = random.Random(1)
    events = [
        Done(i, Status.FETCHED, 200, Specific.OK, rnd.randrange(5, 500),
             tuple(f"http://h{rnd.randrange(1000)}.wreck.test/section/{j}/page-{rnd.randrange(10**6)}.html"
                   for j in range(links)))
        for i in range(n)
    ]  # fmt: skip
    return _measure(client, server, events)


def bench_records(n: int, size: int = 30 * 1024) -> dict:
    server, client = open_store_pair()
    body = (b"<p>" + b"lorem ipsum dolor sit amet " * 40 + b"</p>\n") * (size // 1100 + 1)
    doc = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body[:size]
    events = [
        Record(i, True, Specific.OK, http_enum(200), 120, f"http://h{i % 1000}.wreck.test/page-{i}.html", None, doc)
        for i in range(n)
    ]
    return _measure(client, server, events)


def main() -> None:
    quick = "--quick" in sys.argv
    scale = 10 if quick else 1
    results = {
        "date": date.today().isoformat(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "assignment_lines": bench_assignments(limits.MAX_CREDIT // scale),  # one full credit window
        "done_100_outlinks": bench_done(20_000 // scale),
        "records_30KB": bench_records(100_000 // scale),
    }
    results["targets"] = {
        "records_decoded_per_s": [results["records_30KB"]["decoded_per_s"], TARGETS["records_decoded_per_s"]],
        "done100_decoded_per_s": [results["done_100_outlinks"]["decoded_per_s"], TARGETS["done100_decoded_per_s"]],
    }
    for name in ("assignment_lines", "done_100_outlinks", "records_30KB"):
        r = results[name]
        print(f"{name:20s} encode {r['encoded_per_s']:>9,}/s  decode {r['decoded_per_s']:>9,}/s  "
              f"round trip {r['round_trip_per_s']:>9,}/s  ({r['decode_MB_per_s']} MB/s decoded)")  # fmt: skip
    for name, (got, aim) in results["targets"].items():
        print(f"{name}: {got:,} (aim {aim:,}): ratio {got / aim:.2f}")
    if not quick:
        RESULTS.mkdir(exist_ok=True)
        out = RESULTS / f"{results['date']}-protocol.json"
        out.write_text(json.dumps(results, indent=2) + "\n")
        print(f"written to {out}")


if __name__ == "__main__":
    main()
