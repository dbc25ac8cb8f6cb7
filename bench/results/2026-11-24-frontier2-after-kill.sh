#!/bin/bash
# after the 100M bench is killed (kill -9) part-way: reopen its data directory as the bench would
dir=$1
cd /tmp/frontier-100m
echo "== urls, hosts"
.venv/bin/python - "$dir" <<'PY'
import lmdb, sys
env = lmdb.open(sys.argv[1], max_dbs=20, readonly=True, lock=False)
for name in (b"urls", b"hosts", b"queue"):
    db = env.open_db(name, create=False)
    with env.begin() as txn:
        print(name.decode(), txn.stat(db)["entries"])
PY
echo "== open after kill -9 (no saved Bloom filter)"
ls $dir
.venv/bin/python -m bench.frontier_bench --measure-open "$dir"
echo "== open after a clean stop"
.venv/bin/python -m bench.frontier_bench --measure-open "$dir"
echo "== hand-outs"
.venv/bin/python - "$dir" <<'PY'
import gc, sys, time
sys.path.insert(0, ".")
from bench.frontier_bench import prepare_hosts, handouts
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.settings import Settings
settings = Settings(data=sys.argv[1], delay=0.0, ip_concurrency=1_000_000, scope="any", max_pages=10**9, sync=False, http=None)
crawl = Crawl.open(settings)
prepare_hosts(crawl)
gc.freeze()
s, n = handouts(crawl, 200_000)
print(f"handouts {n} in {s:.1f} CPU-s: {n/s:,.0f}/s")
crawl.close()
PY
