# Pages/s over time for each phase of a bench/crawl.py result (run with the
# bench venv's python, which has matplotlib): python bench/plot.py JSON PNG
"""Plot pages/s over time from a crawl benchmark result."""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

res = json.load(open(sys.argv[1]))
fig, ax = plt.subplots(figsize=(10, 5))
if "ceiling" in res and "access_log" in res["ceiling"]:  # over in a second or two: a level, not a curve
    rate = res["ceiling"]["access_log"]["pages_per_s_active"] or res["ceiling"]["pages_per_s_wall"]
    ax.axhline(rate, color="tab:blue", linestyle="--", label=f"ceiling, nginx + pycurl blaster ({rate:.0f} pages/s)")
for name in ("wreck", "scrapy"):
    if name in res and "access_log" in res[name]:
        series = res[name]["access_log"]["per_second"]
        ax.plot(range(len(series)), series, label=f"{name} ({res[name]['pages_per_s_wall']} pages/s)")
ax.set_xlabel("seconds since the phase started")
ax.set_ylabel("pages/s (nginx access log)")
ax.set_yscale("symlog", linthresh=100)
w = res["web"]
ax.set_title(f"WRECK crawl bench {res['date']}: {w['hosts']} hosts, {w['pages']} pages")
ax.legend()
ax.grid(alpha=0.3)
fig.savefig(sys.argv[2], dpi=100, bbox_inches="tight")
