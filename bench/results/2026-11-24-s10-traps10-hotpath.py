"""CPU of Frontier.discover_links with the domain caps on and off (alternated),
on 200 sites of their own domains (no crowd) and on 200 hosts of one domain
(a crowd: its URLs counted in bulk), 2,000 pages of 60 links each."""
import sys, tempfile, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))  # the repository
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.settings import Settings

PAGES, LINKS = 2000, 60

def run(hosts, caps):
    # on: the host cap at its default (1000, above the 200 hosts) and a domain budget never reached,
    # so a crowd's URLs are counted and none refused; off: both caps 0 (no DomainBudget at all)
    caps_kw = {"max_pages_per_domain": 10**9} if caps else {"max_hosts_per_domain": 0, "max_pages_per_domain": 0}
    with tempfile.TemporaryDirectory() as d:
        c = Crawl.open(Settings(data=d, scope="any", sync=False, delay=0.0, max_pages=10**9, **caps_kw),
                       clock=lambda: 0.0)
        for h in hosts:  # every host known first, as in a crawl under way
            c.frontier.discover(f"http://{h}/", depth=0)
        c.frontier.commit()
        pages = [[f"http://{hosts[(p * 7 + k) % len(hosts)]}/p{p}-{k}" for k in range(LINKS)] for p in range(PAGES)]
        t = time.process_time()
        for i, links in enumerate(pages):
            c.frontier.discover_links(links, depth=1, base="http://x.test/")
            if i % 50 == 49:
                c.frontier.commit()
        cpu = time.process_time() - t
        crowded = len(c.frontier.crowded)
        c.close()
    return cpu, crowded

for label, hosts in (("200 domains", [f"h{i}.site{i}.com" for i in range(200)]),
                     ("one domain", [f"h{i}.site.com" for i in range(200)])):
    res = {True: [], False: []}
    for rep in range(4):
        for caps in ((True, False) if rep % 2 else (False, True)):
            res[caps].append(run(hosts, caps))
    on = min(r[0] for r in res[True]); off = min(r[0] for r in res[False])
    print(f"{label}: caps on {on:.3f} CPU-s (crowded hosts {res[True][0][1]}), off {off:.3f}, "
          f"ratio {on / off:.3f}; all on {[round(r[0], 3) for r in res[True]]} off {[round(r[0], 3) for r in res[False]]}")
