# Cost of a page's content fingerprint, one core: main-text extraction
# (resiliparse), the simhash of that text (numpy), the body hash (BLAKE2b),
# and for comparison the text of a tree the spider's link extraction has
# already parsed (selectolax lexbor). Pages: bench/html_corpus.py's
# realistic article pages, scaled to 15 KB each.
#
#   .venv/bin/python -m bench.dedup_bench [--pages 300]
"""Microseconds per 15 KB page for each step of the fingerprint."""

from __future__ import annotations

import argparse
import time

from selectolax.lexbor import LexborHTMLParser

from bench.html_corpus import Corpus
from storeserver import fingerprint as F

PAGE_BYTES = 15 * 1024


def _per_page(pages, fn) -> float:
    fn(pages[0])
    start = time.perf_counter()
    for page in pages:
        fn(page)
    return (time.perf_counter() - start) / len(pages) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=300)
    args = parser.parse_args()
    corpus = Corpus(min_kb=15, max_kb=15)
    pages = [corpus.body(i)[:PAGE_BYTES] for i in range(args.pages)]
    texts = [F.main_text(p, "text/html") for p in pages]
    trees = [LexborHTMLParser(p) for p in pages]
    rows = [
        ("body hash (BLAKE2b-128)", _per_page(pages, F.body_hash)),
        ("main text (resiliparse, parse + extract)", _per_page(pages, lambda p: F.main_text(p, "text/html"))),
        ("simhash of the main text (numpy)", _per_page(texts, F.simhash)),
        ("whole fingerprint (store side: of_body)", _per_page(pages, lambda p: F.of_body(p, "text/html"))),
        ("text of an already parsed lexbor tree", _per_page(trees, lambda t: t.body.text(separator=" "))),
        ("simhash of that whole-page text", _per_page([t.body.text(separator=" ") for t in trees], F.simhash)),
        ("lexbor parse (what the spider already pays)", _per_page(pages, LexborHTMLParser)),
    ]
    print(f"{len(pages)} pages of {PAGE_BYTES // 1024} KB, one core")
    for name, us in rows:
        print(f"  {name:<46} {us:7.0f} us/page")


if __name__ == "__main__":
    main()
