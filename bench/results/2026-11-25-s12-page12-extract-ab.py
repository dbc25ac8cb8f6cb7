# extract() of another tree's spider/outlinks.py (--main: main's, from a
# `git archive`) against this tree's, on the same pages in one process
# (separate processes differ by more than the change: an A/A pair of
# page_path measured the second process 17 us a page slower), for
# bench/results/2026-11-25-s12-page12.md section 3. Checks the links are
# the same on every page, then prints per corpus the least and median CPU
# us a page of 9 rounds (the order alternated each round), and the median
# of each bucket of '<' count of the least of 5 runs a page (every third
# page). The page's '<' count is given to this tree's extract as the worker
# gives it (htmlguard's count, made before and not timed).
# Run from the tree's root: .venv/bin/python bench/results/2026-11-25-s12-page12-extract-ab.py \
#        --main /tmp/page12-before/spider/outlinks.py \
#        --web /tmp/page12-bench/web-100x10000:50:60 --web /tmp/page12-real:50:400
"""extract() of two trees, interleaved in one process."""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, ".")  # run from the tree's root
from bench.page_path import load_pages  # noqa: E402
from wreck.spider import outlinks as new  # noqa: E402

EDGES = (0, 200, 300, 400, 600, 800, 1200, 2000, 4000, 10**9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--main", type=Path, required=True, help="the other tree's spider/outlinks.py")
    parser.add_argument("--web", action="append", required=True, help="DIR:HOSTS:PAGES_A_HOST (page_path's web)")
    parser.add_argument("--pages", type=int, default=1500)
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("main_outlinks", args.main)
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    for web in args.web:
        root, hosts, per = web.split(":")
        pages = load_pages(Path(root), int(hosts), int(per))[: args.pages]
        counts = [body.count(b"<") for _, body in pages]
        if any(old.extract(b, u) != new.extract(b, u, tags=n) for (u, b), n in zip(pages, counts)):
            raise SystemExit(f"{root}: the links differ")
        large = sum(n >= new.ONE_WALK_TAGS for n in counts)
        rounds: dict[str, list[float]] = {"main": [], "this": []}
        for r in range(9):
            for name in ("main", "this") if r % 2 else ("this", "main"):
                t0 = time.process_time()
                if name == "main":
                    for u, b in pages:
                        old.extract(b, u)
                else:
                    for (u, b), n in zip(pages, counts):
                        new.extract(b, u, tags=n)
                rounds[name].append((time.process_time() - t0) / len(pages) * 1e6)
        print(f"{root}: {len(pages)} pages, {large} at {new.ONE_WALK_TAGS} '<' or more; us a page (least, median):",
              {k: (round(min(v), 1), round(statistics.median(v), 1)) for k, v in rounds.items()})
        rows = []
        for (u, b), n in list(zip(pages, counts))[::3]:
            best = {"main": 9.0, "this": 9.0}
            for _ in range(5):
                for name in ("main", "this"):
                    t0 = time.perf_counter()
                    old.extract(b, u) if name == "main" else new.extract(b, u, tags=n)
                    best[name] = min(best[name], time.perf_counter() - t0)
            rows.append((n, best["main"] * 1e6, best["this"] * 1e6))
        for lo, hi in zip(EDGES, EDGES[1:]):
            sel = [row for row in rows if lo <= row[0] < hi]
            if sel:
                print(f"  '<' {lo}-{hi}: {len(sel)} pages, main {statistics.median(r[1] for r in sel):.1f}, "
                      f"this {statistics.median(r[2] for r in sel):.1f}, "
                      f"diff {statistics.median(r[2] - r[1] for r in sel):+.1f} us")


if __name__ == "__main__":
    main()
