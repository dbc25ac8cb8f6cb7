"""Public conformance data for WRECK's URL handling (docs/urls.md).

The WHATWG URL tests (web-platform-tests' urltestdata.json, kept in
tests/shared/data/ because CI has ../shared only beside a clone) run through
the spider's link resolution (wreck.urlnorm.BaseUrl) and the urlserver's
normalisation of a DONE's links (urlserver/pagelinks.py): every case is resolved exactly as the
standard's href after WRECK's documented steps, or refused by design (a
scheme other than http/https, or an input the standard itself fails).

RFC 3986 section 6's equivalences, and the differences WRECK keeps on
purpose, as pairs that must and must not give one seen-set key (the
urlserver's fingerprint of the normalised URL)."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest

from wreck.urlnorm import BaseUrl, normalize
from wreck.urlserver.db import fingerprint
from wreck.urlserver.pagelinks import normal_columns

DATA = Path(__file__).parent / "data" / "urltestdata.json"
CASES = [case for case in json.loads(DATA.read_text(encoding="utf-8")) if isinstance(case, dict)]
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _escape(match: re.Match[str]) -> str:
    byte = int(match.group(1), 16)
    return chr(byte) if byte in _UNRESERVED else "%" + match.group(1).upper()


def expected(case: dict) -> str | None:
    """What WRECK must make of a case: the standard's href after the steps of
    docs/urls.md (fragment and user:password dropped, escapes of unreserved
    characters decoded, other escapes in uppercase), or None (refused)."""
    if case.get("failure") or case["protocol"] not in ("http:", "https:"):
        return None
    href = case["href"].partition("#")[0]
    user, password = case["username"], case["password"]
    userinfo = f"{user}{':' + password if password else ''}@" if user or password else ""
    prefix = f"{case['protocol']}//{userinfo}{case['host']}"
    assert href.startswith(prefix)
    return _ESCAPE.sub(_escape, f"{case['protocol']}//{case['host']}{href[len(prefix):]}")


def _verdict(case: dict) -> str:
    want = expected(case)
    if case.get("failure"):
        return "refused: the standard fails it too"
    if want is None:
        return "refused: not http or https"
    return "resolved exactly" if want == case["href"] else "resolved, after documented steps"


def test_the_data_is_the_public_file_when_it_is_beside_the_clone():
    shared = Path(__file__).parents[3] / "shared" / "conformance" / "urltestdata.json"
    if shared.exists():
        assert shared.read_bytes() == DATA.read_bytes()
    assert len(CASES) == 891


@pytest.mark.parametrize("case", CASES, ids=lambda c: repr(c["input"])[:40] + " @ " + repr(c.get("base"))[:30])
def test_whatwg_url_case_is_resolved_as_the_standard_says_or_refused_by_design(case):
    base, want = case.get("base"), expected(case)
    assert normalize(case["input"], base) == want  # wreck.urlnorm, shared by spider and urlserver
    assert normal_columns([case["input"]], base, set())[0] == ([] if want is None else [want])  # the urlserver's
    if base is not None and base.startswith(("http:", "https:")):
        assert BaseUrl(base).resolve(case["input"]) == want  # the spider's path (spider/outlinks.py)
    if want is not None:
        assert normalize(want) == want  # a key is its own normal form


def test_whatwg_url_counts_are_those_written_in_docs_urls_md():
    counts = collections.Counter(map(_verdict, CASES))
    assert counts == {
        "resolved exactly": 181,
        "resolved, after documented steps": 66,
        "refused: not http or https": 377,
        "refused: the standard fails it too": 267,
    }
    doc = (Path(__file__).parents[2] / "docs" / "urls.md").read_text()
    for verdict, count in counts.items():
        assert f"| {verdict} | {count} |" in doc


def _key(url: str) -> bytes | None:
    found = normalize(url)
    return None if found is None else fingerprint(found)


# RFC 3986 6.2.2 (syntax-based) and 6.2.3 (scheme-based) equivalences, plus
# WRECK's own steps (docs/urls.md): each pair is one page, one key.
SAME = [
    ("HTTP://Example.COM/a", "http://example.com/a"),  # 6.2.2.1 case of scheme and host
    ("http://example.com/a%c2%b1b", "http://example.com/a%C2%B1b"),  # 6.2.2.1 case of escapes
    ("http://example.com/%7Euser/%41%2d%5F", "http://example.com/~user/A-_"),  # 6.2.2.2 unreserved
    ("http://example.com/a/./b/../c", "http://example.com/a/c"),  # 6.2.2.3 dot segments
    ("http://example.com", "http://example.com/"),  # 6.2.3 empty path
    ("http://example.com:80/a", "http://example.com/a"),  # 6.2.3 default port
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://example.com:/a", "http://example.com/a"),  # 6.2.3 empty port
    ("http://example.com/a#part", "http://example.com/a"),  # a fragment is not sent
    ("http://user:pw@example.com/a", "http://example.com/a"),  # WRECK: user:password dropped
    ("http://EXAMPLE.com./a", "http://example.com./a"),
    ("http://bücher.de/", "http://xn--bcher-kva.de/"),  # IDNA (WHATWG host parsing)
    ("http://0x7f.1/", "http://127.0.0.1/"),  # IPv4 forms (WHATWG host parsing)
    ("http://example.com/a b", "http://example.com/a%20b"),
    ("http://example.com/é", "http://example.com/%C3%A9"),
    ("http://example.com/a^b", "http://example.com/a%5Eb"),  # the standard's path set encodes '^'
    ("http://example.com/a;jsessionid=0123456789ABCDEF", "http://example.com/a"),  # WRECK: session ids
    ("http://example.com/a?x=1&PHPSESSID=abc", "http://example.com/a?x=1"),
]
# Different URLs to WRECK: a server may answer each differently.
DIFFERENT = [
    ("http://example.com/A", "http://example.com/a"),  # path case is the server's
    ("http://example.com/a%2Fb", "http://example.com/a/b"),  # 6.2.2.2: reserved escapes stay
    ("http://example.com/?a=%26", "http://example.com/?a=&"),
    ("http://example.com/?a=1&b=2", "http://example.com/?b=2&a=1"),  # query order kept
    ("http://example.com/a//b", "http://example.com/a/b"),  # '//' kept
    ("http://example.com/a", "http://example.com/a/"),
    ("http://example.com/a?", "http://example.com/a"),  # 6.2.3: an empty query's '?' stays
    ("http://example.com/", "https://example.com/"),
    ("http://example.com:8080/", "http://example.com/"),
    ("http://www.example.com/", "http://example.com/"),
    ("http://example.com/a|b", "http://example.com/a%7Cb"),  # docs/urls.md: kept as browsers send them
    ("http://example.com/a[b]", "http://example.com/a%5Bb%5D"),
    ("http://example.com/?q=`", "http://example.com/?q=%60"),
    ("http://example.com/a%zz", "http://example.com/a%25zz"),  # a stray '%' stays raw
    ("http://example.com/a?sid=abc", "http://example.com/a"),  # a short sid is a real id
]


@pytest.mark.parametrize(("one", "other"), SAME)
def test_rfc3986_equivalent_urls_share_one_seen_set_key(one, other):
    assert _key(one) is not None and _key(one) == _key(other)


@pytest.mark.parametrize(("one", "other"), DIFFERENT)
def test_urls_a_server_may_tell_apart_keep_two_keys(one, other):
    assert _key(one) is not None and _key(other) is not None
    assert _key(one) != _key(other)


def test_characters_left_raw_by_the_standard_stay_raw():
    assert normalize("http://example.com/a|b[c]%zz?q=`{}|^") == "http://example.com/a|b[c]%zz?q=`{}|^"
    # the standard's path percent-encode set has these
    assert normalize("http://example.com/a`{}^") == "http://example.com/a%60%7B%7D%5E"
