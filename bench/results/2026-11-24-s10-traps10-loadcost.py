"""CPU of DomainBudget.load at a start: N hosts, names as on a real web (distinct
domains, some sharing), and as the frontier bench's (all under example.com)."""
import sys, time, random
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))  # the repository
from wreck.urlserver.domainbudget import DomainBudget, owner_domain
from wreck.urlserver.politeness import Origin
from wreck.urlserver.scope import psl_domain
psl_domain("a.example.com")  # the PSL snapshot loaded outside the timing
N = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
rng = random.Random(1)
tlds = ["com", "org", "net", "de", "co.uk", "fr", "blogspot.com", "github.io", "com.au", "io"]
def web_name(i):
    # 70 % of hosts alone in their domain (www.x.tld), 30 % a subdomain of a domain with a few
    if i % 10 < 7:
        return f"www.site{i}.{tlds[i % len(tlds)]}"
    return f"s{i % 7}.group{i // 70}.{tlds[i % len(tlds)]}"
for label, namer in (("real-web-like", web_name), ("one domain (frontier bench)", lambda i: f"h{i}.example.com")):
    hosts = [Origin(f"http://{namer(i)}", namer(i), i, 0, 0, 5) for i in range(N)]
    owner_domain.cache_clear()
    t = time.process_time()
    b = DomainBudget(max_hosts=1000, max_pages=1_000_000, seed_hosts=set())
    b.load(hosts)
    cpu = time.process_time() - t
    print(f"{label}: {N} hosts, load {cpu:.3f} CPU-s ({cpu / N * 1e6:.2f} us a host), "
          f"{len(b.domains)} domains counted, {len(b._singles)} waiting alone, {len(b.crowded)} hosts in crowds")
