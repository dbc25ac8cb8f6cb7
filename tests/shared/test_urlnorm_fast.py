# wreck.urlnorm's string fast path for absolute links (normal_absolute) gives
# what ada-url's parse gives (normalize_parsed), or leaves the link to it: on
# the WHATWG URL tests, on links as the benchmark web writes them, on the
# absolute links of the realdocs pages (when installed) and on mutations.
from __future__ import annotations

import html
import json
import random
import re
from pathlib import Path

import pytest

from wreck.protocol import limits
from wreck.urlnorm import normal_absolute, normalize, normalize_parsed
from tests.spider_helpers import REALDOCS

DATA = Path(__file__).parent / "data" / "urltestdata.json"
CASES = [case for case in json.loads(DATA.read_text(encoding="utf-8")) if isinstance(case, dict)]
_ABSOLUTE_HREF = re.compile(rb"""href\s*=\s*["']?(https?://[^"'\s>]*)""", re.I)


def agree(urls) -> int:
    """Assert that the fast path agrees with the parse on every URL; how many it took."""
    taken = 0
    for url in urls:
        fast = normal_absolute(url)
        parsed = normalize_parsed(url)
        if fast is not None:
            assert fast == parsed, url
            taken += 1
        assert normalize(url) == parsed, url
        if parsed is not None:  # a normal form is its own, by either path
            assert normal_absolute(parsed) in (None, parsed), parsed
    return taken


def test_the_fast_path_agrees_with_the_parse_on_the_whatwg_url_tests():
    inputs = [case["input"] for case in CASES]
    inputs += [case["href"] for case in CASES if not case.get("failure") and case["protocol"] in ("http:", "https:")]
    assert agree(inputs) >= 50


def test_the_fast_path_takes_the_benchmark_webs_links():
    # as bench/webgen.py writes them, to other hosts of the web, resolved
    bases = [f"http://w{i:04d}.bench.test:18462" for i in range(50)] + ["http://127.2.0.1:8080", "https://a.test"]
    links = [base + tail for base in bases for tail in ("", "/", "/p/7.html", "/cgi-bin/search?q=x",
                                                        "/static/site3.css", "?x=1")]
    assert agree(links) == len(links)


def test_the_fast_path_agrees_with_the_parse_on_the_realdocs_absolute_links():
    roots = [Path(root) for root in REALDOCS if Path(root).is_dir()]
    if not roots:
        pytest.skip("no realdocs tree installed (bench/realdocs.py names the Debian packages)")
    hrefs = set()
    for root in roots:
        for path in root.rglob("*.html"):
            for raw in _ABSOLUTE_HREF.findall(path.read_bytes()):
                href = raw.decode("utf-8", "replace")
                hrefs.update((href, html.unescape(href)))
    assert agree(sorted(hrefs)) >= len(hrefs) // 2


# Mutations: what breaks an absolute link's normal form one character at a time.
_SEEDS = ("http://a.example/p/1.html?x=1&y=2", "https://w0001.bench.test:18462/", "http://127.0.0.1:8080/a/b",
          "http://docs.python.org/3/library/os.html", "https://x-y.z9.example/a;b=c/d@e?f=g/h?i",
          "http://xn--bcher-kva.de/", "http://255.255.255.255/", "http://a.b.c.d.example:65535/~u/(x)*$!,+")
_PIECES = (".", "..", "/", "/.", "/..", ":", ":80", ":443", ":0", ":080", ":65536", "@", "u:p@", "%", "%41", "%2e",
           "#", "#f", "?", "\\", " ", "\t", "\n", "'", '"', "<", "`", "{", "^", "|", "[", "]", "[::1]", "é", "ß",
           "A", "Z", "0", "9", "00", "0x", "x", "xn--", "-", "=", ";", "&", "sid=" + "a" * 32, ";jsessionid=1",
           "PHPSESSID=2", "\x00", "\x7f", "\u3002", "\uff0e", "HTTP://", "http:", "//", "https", "~", "*")


def _mutated(rng: random.Random) -> str:
    url = rng.choice(_SEEDS)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(url) + 1)
        move = rng.randrange(4)
        if move == 0:
            url = url[:at] + rng.choice(_PIECES) + url[at:]
        elif move == 1:
            url = url[:at] + rng.choice(_PIECES) + url[at + 1 :]
        elif move == 2:
            url = url[:at] + url[at + 1 :]
        else:
            url = url[:at] + url[at:].upper()
    return url


def test_the_fast_path_agrees_with_the_parse_on_mutated_links():
    rng = random.Random(16)
    urls = [_mutated(rng) for _ in range(20_000)]
    urls += ["http://a.example/" + "x" * (limits.MAX_URL_LEN - 17 + k) for k in (-2, -1, 0, 1)]
    urls += ["http://a.example?" + "x" * (limits.MAX_URL_LEN - 18 + k) for k in (-2, -1, 0, 1)]
    assert agree(urls) >= 1_000
