# Cost of a page's content fingerprint, one core, per step: the body hash
# (BLAKE2b), the text the store hashes (lexbor parse, boilerplate elements
# stripped), its simhash (numpy); and the alternatives: resiliparse's main
# text (what wreck-dump --text prints), and the text of a tree the spider's
# link extraction has already parsed. Then how well each text separates
# pages: the smallest simhash distance between two different pages of one
# site (same template) and of two sites. Pages: tests/web/corpus.py's
# realistic article pages, cut to 15 KB (--kb).
#
#   .venv/bin/python -m bench.dedup_bench [--pages 300] [--kb 15]    (make bench-dedup)
"""Microseconds per 15 KB page for each step of the fingerprint."""

from __future__ import annotations

import argparse
import itertools
import time

from selectolax.lexbor import LexborHTMLParser

from tests.web.corpus import Corpus
from wreck.storeserver import fingerprint as F

def _per_page(pages, fn) -> float:
    fn(pages[0])
    start = time.process_time()  # CPU time: other processes on the machine do not count
    for page in pages:
        fn(page)
    return (time.process_time() - start) / len(pages) * 1e6


def _separation(hashes: list[int | None], sites: int) -> tuple[int, int]:
    same, other = 64, 64
    for i, j in itertools.combinations(range(len(hashes)), 2):
        if hashes[i] is None or hashes[j] is None:
            continue
        d = F.distance(hashes[i], hashes[j])
        if i % sites == j % sites:
            same = min(same, d)
        else:
            other = min(other, d)
    return same, other


def _resiliparse_text(page: bytes) -> str:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return extract_plain_text(HTMLTree.parse_from_bytes(page, "utf-8"), main_content=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--kb", type=int, default=15, help="page size (0: the corpus's 20-60 KB pages)")
    args = parser.parse_args()
    corpus = Corpus()
    pages = [corpus.body(i)[: args.kb * 1024] if args.kb else corpus.body(i) for i in range(args.pages)]
    size = sum(map(len, pages)) / len(pages) / 1024
    texts = [F.page_text(p, "text/html") for p in pages]
    rtexts = [_resiliparse_text(p) for p in pages]
    trees = [LexborHTMLParser(p) for p in pages]
    rows = [
        ("body hash (BLAKE2b-128)", _per_page(pages, F.body_hash)),
        ("store text (lexbor, boilerplate stripped)", _per_page(pages, lambda p: F.page_text(p, "text/html"))),
        ("simhash of that text (numpy)", _per_page(texts, F.simhash)),
        ("whole fingerprint, as the store runs it", _per_page(pages, lambda p: F.of_body(p, "text/html"))),
        ("resiliparse main text (wreck-dump --text)", _per_page(pages, _resiliparse_text)),
        ("lexbor parse (the spider pays it for links)", _per_page(pages, LexborHTMLParser)),
        ("text of the spider's already parsed tree", _per_page(trees, lambda t: t.body.text(separator=" "))),
    ]
    print(f"{len(pages)} pages of {size:.1f} KB on average, one core")
    for name, us in rows:
        print(f"  {name:<46} {us:7.0f} us/page")
    sites = len(corpus.sites)
    for name, txts in (("store text", texts), ("resiliparse main text", rtexts)):
        same, other = _separation([F.simhash(t) for t in txts], sites)
        print(f"  {name}: closest two pages of one site {same} bits apart, of two sites {other}")


if __name__ == "__main__":
    main()
