# Packer.pack a page, this tree's (argv[1] names it), on the bench web's pages: CPU-us a page, interleaved rounds done by the caller
import os, random, sys, time
from pathlib import Path
import zstandard as zstd
from wreck.protocol import Dictionary, Record, Specific, http_enum
from wreck.spider.docpack import Packer
root = Path(sys.argv[2])
paths = [Path(t) / f for t, _d, fs in os.walk(root) for f in fs if f.endswith(".html")]
random.Random(7).shuffle(paths)
head = b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n"
docs = [head % len(b) + b for b in (p.read_bytes() for p in paths[:5000])]
d = zstd.train_dictionary(1 << 20, [x[:65536] for x in docs[:2000]], k=1024, d=8, accel=8, threads=1).as_bytes()
packer = Packer(Dictionary(1, 3, d))
recs = [Record(i, True, Specific.OK, http_enum(200), 5, f"http://h/{i}", None, x) for i, x in enumerate(docs[2000:])]
packer.pack(recs[0])
best = 1e9
for _ in range(int(sys.argv[3])):
    t = time.thread_time()
    for r in recs:
        packer.pack(r)
    best = min(best, time.thread_time() - t)
print(sys.argv[1], round(best / len(recs) * 1e6, 1), "us a page (pack: head, SHA-256, zstd)")
