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
from wreck.urlnorm import BaseUrl, normal_absolute, normalize, normalize_parsed
from wreck.urlserver.pagelinks import normal_columns
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


# Hostile links as a page may write them: the WHATWG cases against their
# bases, mutations of absolute links, and the hostile test web's own shapes.
_HOSTILE = ["../../../../etc/passwd", "/a/./b/../c", "//evil.wreck.test/x", "HTTP://EVIL.wreck.test:80/",
            "/redirect/to?url=http://127.0.0.1/&code=301", "?PHPSESSID=1&x=2", "/s;jsessionid=A1/p?x=1",
            "http://user:pw@evil.wreck.test/", "http://evil.wreck.test/%7e%2f%2E%2e/", "  /trim\t\n ",
            "http://[::1]:8080/", "http://0x7f.1/", "http://xn--bcher-kva.de/", "http://bücher.de/?q=é",
            "javascript:alert(1)", "mailto:a@b", "http://evil.wreck.test", "http://evil.wreck.test?q",
            "http://evil.wreck.test/it's?it's", "http://127.0.0.;jsessionid=1/A/B",
            "https:/;jsessionid=1/x.example/a", "http://a_b.evil.wreck.test:443/", "https://evil.wreck.test:443/"]


def test_the_spider_and_the_urlserver_give_a_hostile_link_one_normal_form():
    # The spider resolves a page's links (BaseUrl, spider/outlinks.py); the
    # urlserver, trusting no spider, normalises what a DONE carries
    # (pagelinks.normal_columns, as Frontier.discover_links) and a redirect
    # target (normalize, as Frontier.discover). A link given two normal forms
    # would be fetched twice, or never: every entry point agrees with the
    # parse, and the spider's answer is the urlserver's own normal form.
    rng = random.Random(9)
    pairs = [(case["input"], case["base"]) for case in CASES if str(case.get("base")).startswith("http")]
    pairs += [(_mutated(rng), "http://evil.wreck.test/dir/page.html") for _ in range(5_000)]
    pairs += [(ref, base) for ref in _HOSTILE for base in ("http://evil.wreck.test/a/b/c.html", "https://x.test/")]
    for ref, base in pairs:
        want = normalize_parsed(ref, base)
        spider = BaseUrl(base).resolve(ref)
        assert spider == want, (ref, base)
        assert normal_columns([ref], base, set())[0] == ([] if want is None else [want]), (ref, base)
        assert normalize(ref, base) == want, (ref, base)
        if want is not None:  # what a spider sends is taken as it is: one key
            assert normal_columns([want], None, set())[0] == [want]
            assert normalize(want) == want
