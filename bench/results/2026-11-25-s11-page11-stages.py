# Session 11, page11: the stages of a page's link extraction, CPU us a page,
# in one process (the heap held as bench/page_path.py holds it), each stage
# the least of 9 rounds over the same pages, the stages interleaved round by
# round so that the machine's load falls on all of them alike.
# Run from the tree's root: .venv/bin/python bench/results/2026-11-25-s11-page11-stages.py --web WEB
"""CPU us a page of lexbor's parse, the tags() walks, the attribute dicts, the walk and its resolution."""

from __future__ import annotations

import argparse
import operator
import sys
import time
from pathlib import Path

sys.path.insert(0, ".")
from bench import page_path  # noqa: E402
from selectolax.lexbor import LexborHTMLParser  # noqa: E402
from wreck.spider import outlinks  # noqa: E402
from wreck.urlnorm import BaseUrl  # noqa: E402

ATTRS = operator.attrgetter("attributes")
TAGS = ("base", "meta", "a", "area", "link", "frame", "iframe")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--web", type=Path, required=True)
    parser.add_argument("--pages", type=int, default=600)
    args = parser.parse_args()
    page_path.hold_heap()
    pages = page_path.load_pages(args.web, 50, 60)[: args.pages]
    trees = [(url, LexborHTMLParser(body)) for url, body in pages]
    refs = [(url, dict.fromkeys(ref.partition("#")[0] for ref in _hrefs(tree))) for url, tree in trees]
    # each stage drops its page's tree before the next page's, as a worker does
    stages = {
        "parse (and free) the tree": lambda: all(LexborHTMLParser(body) and True for _, body in pages),
        "parse + tags('a')": lambda: all(LexborHTMLParser(body).tags("a") or True for _, body in pages),
        "parse + tags('a') + attribute dicts": lambda: all(
            list(map(ATTRS, LexborHTMLParser(body).tags("a"))) or True for _, body in pages),
        "parse + the seven tags() walks": lambda: all(
            [tree.tags(tag) for tag in TAGS] for tree in (LexborHTMLParser(body) for _, body in pages)),
        "extract(): sniff, parse, walks, resolution": lambda: all(
            outlinks.extract(body, url, b"text/html") or True for url, body in pages),
        "_walk() on a parsed tree (trees kept)": lambda: all(
            outlinks._walk(tree, url, url, None) or True for url, tree in trees),
        "BaseUrl(base).resolve_all(unique refs)": lambda: all(
            BaseUrl(url).resolve_all(r) or True for url, r in refs),
    }
    best = dict.fromkeys(stages, float("inf"))
    for _ in range(9):
        for name, stage in stages.items():
            start = time.process_time()
            stage()
            best[name] = min(best[name], time.process_time() - start)
    for name, seconds in best.items():
        print(f"{1e6 * seconds / len(pages):8.1f}  {name}")


def _hrefs(tree: LexborHTMLParser) -> list[str]:
    return [href for href in (attrs.get("href") for attrs in map(ATTRS, tree.tags("a"))) if href]


if __name__ == "__main__":
    main()
