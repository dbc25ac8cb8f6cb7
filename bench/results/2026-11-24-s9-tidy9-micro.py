# One URL's normal form, per call, in the spider's and the urlserver's entry points (tidy9, s9):
# the least of 20 passes of process CPU over 10,000 URLs; run from each tree's root:
#   .venv/bin/python bench/results/2026-11-24-s9-tidy9-micro.py main|mine
# (on main, the urlserver's normal() was urlserver/normal.py's; on the branch it is normalize())
import time, sys
from wreck.urlnorm import normalize, BaseUrl
try:
    from wreck.urlserver.normal import normal
except ImportError:
    normal = normalize
from wreck.urlserver.pagelinks import normal_columns
links = [f"http://w{i:04d}.bench.test:18462/p/{k}.html" for i in range(200) for k in range(50)]
bare = [f"https://site{i}.example" for i in range(10000)]
sess = [f"http://a.example/x{i}?id={i}&session_x=1" for i in range(10000)]
def t(f, n=20):
    best = 1e9
    for _ in range(n):
        s = time.process_time(); f(); best = min(best, time.process_time() - s)
    return best
r = {
 "normalize_abs_ns": t(lambda: list(map(normalize, links))) / len(links) * 1e9,
 "normalize_bare_ns": t(lambda: list(map(normalize, bare))) / len(bare) * 1e9,
 "urlserver_normal_ns": t(lambda: [normal(u, "http://x.test/") for u in links]) / len(links) * 1e9,
 "normal_columns_ns": t(lambda: normal_columns(links, "http://x.test/", set())) / len(links) * 1e9,
 "normalize_session_hint_ns": t(lambda: list(map(normalize, sess)), 5) / len(sess) * 1e9,
}
print(sys.argv[1], " ".join(f"{k}={v:.0f}" for k, v in r.items()))
