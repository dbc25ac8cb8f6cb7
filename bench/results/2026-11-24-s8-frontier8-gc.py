import sys, tempfile, time, gc, shutil
sys.argv=['x']
from bench.frontier_bench import *
tmp = tempfile.mkdtemp(prefix="f8-gc-", dir="/tmp/frontier8-runs")
settings = Settings(data=tmp, delay=0.0, ip_concurrency=1_000_000, scope="any", max_pages=10**9, sync=False, http=None)
crawl = Crawl.open(settings)
web = Web(100_000, 0.8)
ingest(crawl, web, 2_000_000)
prepare_hosts(crawl); gc.freeze()
handouts(crawl, 20_000)
for rnd in range(3):
    for mode in ("default", "threshold 50000", "disabled"):
        if mode == "disabled": gc.disable()
        elif mode == "default": gc.enable(); gc.set_threshold(700, 10, 10)
        else: gc.enable(); gc.set_threshold(50_000, 10, 10)
        c0 = gc.get_stats()
        s, n = handouts(crawl, 40_000)
        print(mode, round(n / s), "hand-outs/s", [x["collections"] for x in gc.get_stats()], flush=True)
gc.enable()
crawl.close(); shutil.rmtree(tmp)
