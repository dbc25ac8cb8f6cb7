# The cookie check's cost (spider/cookies.py, docs/protocol.txt 5.3.2), in
# the spider's process, one core. A page that is no redirect pays one test
# of its status against REDIRECT_CODES (spider/fetch.py's Fetcher._done);
# a redirect to itself that sets cookies pays retry_cookie (http.cookiejar's
# parse and RFC 6265 rules, the Public Suffix List for a Domain attribute)
# and a second request. This times retry_cookie on the answers such sites
# send, names_itself (whether a redirect's target is the URL itself: every
# redirect of a crawl with cookies on pays it; before session 12 it was a
# bytes comparison), and the status test, each as the median of REPEATS runs.
# Run: python -m bench.cookie_bench
"""µs per retry_cookie call, by answer; ns per status test."""

from __future__ import annotations

import json
import statistics
import time

from wreck.publicsuffix import is_public_suffix
from wreck.spider.cookies import names_itself, retry_cookie
from wreck.spider.fetch import REDIRECT_CODES

URL = "http://www.shop.example/cart"
REPEATS = 7
CALLS = 2_000


def _head(*lines: str) -> bytes:
    cookies = b"".join(b"Set-Cookie: " + line.encode() + b"\r\n" for line in lines)
    return (b"HTTP/1.1 302 Found\r\nDate: Wed, 25 Nov 2026 03:00:00 GMT\r\nServer: Apache\r\n"
            b"Location: http://www.shop.example/cart\r\n" + cookies + b"Content-Length: 0\r\n\r\n")


ANSWERS = {
    "one cookie (PHP's check)": _head("seen=1; path=/"),
    "session + check, Domain and Expires": _head(
        "PHPSESSID=8c9f1d7a0b2e4f6a8c9f1d7a0b2e4f6a; path=/; HttpOnly",
        "seen=1; Domain=shop.example; Path=/; Expires=Thu, 25 Nov 2027 03:00:00 GMT; SameSite=Lax"),
    "50 cookies": _head(*(f"c{i:02}={'v' * 40}; Path=/" for i in range(50))),
    "no Set-Cookie": _head(),
}
TARGETS = {  # what libcurl's REDIRECT_URL gives
    "the URL itself, same bytes": b"http://www.shop.example/cart",
    "the URL itself, with a fragment": b"http://www.shop.example/cart#top",
    "another page (the usual redirect)": b"http://www.shop.example/login?next=%2Fcart",
    "another site, https": b"https://shop.example/cart",
}


def _median_us(fn, arg) -> float:
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(CALLS):
            fn(*arg)
        runs.append((time.perf_counter() - start) / CALLS * 1e6)
    return round(statistics.median(runs), 2)


def main() -> None:
    start = time.perf_counter()
    is_public_suffix("shop.example")  # the PSL snapshot, loaded once a process
    load_ms = round((time.perf_counter() - start) * 1000, 1)
    figures = {name: _median_us(retry_cookie, (URL, head)) for name, head in ANSWERS.items()}
    targets = {name: _median_us(names_itself, (target, URL)) for name, target in TARGETS.items()}
    codes = [200] * 1000
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(CALLS // 100):
            for code in codes:
                code in REDIRECT_CODES  # noqa: B015  # the test every page pays
        runs.append((time.perf_counter() - start) / (CALLS * 10) * 1e9)
    print(json.dumps({"bench": "cookie", "psl_load_ms": load_ms, "retry_cookie_us": figures,
                      "names_itself_us": targets,
                      "status_test_ns": round(statistics.median(runs), 1)}, indent=2))


if __name__ == "__main__":
    main()
