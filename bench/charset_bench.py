# The cost of reading a page in its own encoding (wreck/htmlcharset.py) in
# link extraction: spider.outlinks.extract on the spider bench's 30 KB page
# (60 links) in the ways a page declares its encoding, and the sniffing step
# alone. A run with --baseline FILE times FILE's extract(html, url) (an
# older spider/outlinks.py) on the same UTF-8 page, for a before/after.
# Run: python -m bench.charset_bench [--baseline /tmp/old_outlinks.py]
"""Microseconds per page of sniff() and extract(), by how the page is declared."""

from __future__ import annotations

import argparse
import importlib.util
import timeit

from bench.spider_bench import make_page
from wreck import htmlcharset
from wreck.spider.outlinks import extract

URL = "http://bench.test/dir/page.html"


def _cases() -> list[tuple[str, bytes, bytes | None]]:
    page = make_page()
    text = page.decode()
    meta = text.replace("<head>", '<head><meta charset="utf-8">', 1).encode()
    # the same page with non-ASCII links, in Shift_JIS, declared by the header
    sjis = text.replace("/page/", "/日本/ページ?q=日本&n=").encode("shift_jis")
    return [
        ("utf-8, header charset", page, b"text/html; charset=utf-8"),
        ("utf-8, <meta charset>", meta, b"text/html"),
        ("utf-8, undeclared (autodetect)", page, None),
        ("shift_jis, header charset, non-ASCII links", sjis, b"text/html; charset=Shift_JIS"),
    ]


def _us(fn, number: int = 300) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", help="an older spider/outlinks.py, timed as extract(html, url)")
    args = parser.parse_args()
    for name, body, ctype in _cases():
        sniff = _us(lambda: htmlcharset.sniff(body, ctype))
        total = _us(lambda: extract(body, URL, ctype))
        print(f"{name:45s} sniff {sniff:7.1f} us   extract {total:7.1f} us")
    if args.baseline:
        spec = importlib.util.spec_from_file_location("old_outlinks", args.baseline)
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)
        page = make_page()
        print(f"{'baseline extract, utf-8 page':45s}                 {_us(lambda: old.extract(page, URL)):7.1f} us")


if __name__ == "__main__":
    main()
