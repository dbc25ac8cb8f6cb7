# The cost of reading a page in its own encoding (wreck/htmlcharset.py) in
# link extraction: spider.outlinks.extract on the spider bench's 30 KB page
# (60 links) in the ways a page declares its encoding, and the sniffing step
# alone. A run with --baseline FILE times FILE's extract(html, url) (an
# older spider/outlinks.py) on the same UTF-8 page, for a before/after;
# --sniff-baseline FILE times FILE's sniff() (an older wreck/htmlcharset.py)
# on every case, alternating with this one's.
# Run: python -m bench.charset_bench [--baseline /tmp/old_outlinks.py] [--sniff-baseline /tmp/old_htmlcharset.py]
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
    cyrillic = text.replace("/page/", "/дом/страница?q=дом&n=").replace('<meta charset="utf-8">', "")
    return [
        ("utf-8, header charset", page, b"text/html; charset=utf-8"),
        ("utf-8, <meta charset>", meta, b"text/html"),
        ("utf-8, undeclared (autodetect)", page, None),
        ("shift_jis, header charset, non-ASCII links", sjis, b"text/html; charset=Shift_JIS"),
        ("windows-1251, undeclared", cyrillic.encode("cp1251"), None),
        ("windows-1251, <meta http-equiv>", cyrillic.replace(
            "<head>", '<head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251">', 1
        ).encode("cp1251"), b"text/html"),
        ("windows-1251, <meta charset=bogus> first", cyrillic.replace(
            "<head>", '<head><meta charset="bogus"><meta charset="windows-1251">', 1).encode("cp1251"), b"text/html"),
    ]


def _us(fn, number: int = 300) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", help="an older spider/outlinks.py, timed as extract(html, url)")
    parser.add_argument("--sniff-baseline", help="an older wreck/htmlcharset.py, its sniff() timed beside this one's")
    args = parser.parse_args()
    if args.sniff_baseline:
        old_sniff = _load("old_htmlcharset", args.sniff_baseline).sniff
        for name, body, ctype in _cases():
            pairs = [(_us(lambda: old_sniff(body, ctype), 3000), _us(lambda: htmlcharset.sniff(body, ctype), 3000))
                     for _ in range(5)]  # alternating: the machine is shared
            print(f"{name:45s} sniff before {min(p[0] for p in pairs):6.2f} us  after {min(p[1] for p in pairs):6.2f}"
                  f" us  ({old_sniff(body, ctype)} -> {htmlcharset.sniff(body, ctype)})")
        return
    for name, body, ctype in _cases():
        sniff = _us(lambda: htmlcharset.sniff(body, ctype))
        total = _us(lambda: extract(body, URL, ctype))
        print(f"{name:45s} sniff {sniff:7.1f} us   extract {total:7.1f} us")
    if args.baseline:
        old = _load("old_outlinks", args.baseline)
        page = make_page()
        print(f"{'baseline extract, utf-8 page':45s}                 {_us(lambda: old.extract(page, URL)):7.1f} us")


if __name__ == "__main__":
    main()
