"""Crawl the trap web with wreck-crawl ARGS; print per-host requests."""
import collections, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))  # the repository
from tests.e2e_helpers import wreck_crawl
from tests.web import RunningWeb, SiteSpec
from tests.web.crawltraps import TrapHosts

args = sys.argv[1:]
tmp = Path(tempfile.mkdtemp(prefix="traps10-"))
spec = SiteSpec(hosts=3, pages_per_host=12, hostile=False, crawltraps=True)
with RunningWeb(spec, log_path=tmp / "web.jsonl") as web:
    seeds = [*web.site.seed_urls(), *TrapHosts(web.port).seeds()]
    t = time.time()
    run = wreck_crawl(tmp, web, seeds, args)
    print("exit", run.returncode, "in", round(time.time() - t, 1), "s")
    print(run.stdout[-1500:])
    recs = web.log.records()
by = collections.defaultdict(list)
for r in recs:
    by[r.host].append((r.status, r.target))
wild = [h for h in by if h.endswith(".wild.test")]
print("wild hosts", len(wild))
for h in sorted(by):
    if h.endswith(".wild.test"):
        continue
    print(h, len(by[h]))
    for x in by[h][:6]:
        print("   ", x)
    print("    ...", by[h][-3:])
print(tmp)
