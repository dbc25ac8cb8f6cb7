# urlserver/robotsrules.py against Google's own robots.txt parser (its C++
# code, through the jwm.robotstxt bindings, a test dependency), on robots.txt
# bodies and URLs drawn at random from the pieces where parsers disagree:
# misspelt and colon-less keys, product tokens, `*` and `$`, %-escapes and
# raw UTF-8, index.html, byte-order marks, CR/LF/CRLF, NUL bytes and lines
# over the reference's length limit. Google's reference cases
# (test_robots_suite.py) say what the rules are; this checks that no
# combination of them reads differently.
"""robotsrules answers as Google's reference parser on random robots.txt bodies."""

from __future__ import annotations

import random

import pytest

from wreck.urlserver.robotsrules import MAX_LINE, RobotsTxt

googlebot = pytest.importorskip("jwm.robotstxt.googlebot")

KEYS = [b"User-agent", b"user-agent", b"USERAGENT", b"user agent", b"Allow", b"allowed", b"Disallow", b"disalow",
        b"DISSALLOW", b"Sitemap", b"site-map", b"Crawl-delay", b"Noindex", b"\xef\xbb\xbfAllow", b"Disallow\x0b"]
AGENTS = [b"*", b"* bot", b"*bot", b"wreck", b"WRECK/1.0", b"wreck bot", b"wreckage", b"wr*eck", b"other", b"",
          b"\xe3\x83\x84", b"wreck_", b"w\x00reck"]
PIECES = [b"/", b"a", b"b", b"*", b"$", b"?", b"=", b";", b"%", b"%4a", b"%4A", b"%e3%83%84", b"\xc3\xa9", b"\xe3",
          b"index.html", b"index.htm", b".php", b"#c", b" ", b"\t", b"\x00"]
SEPARATORS = [b": ", b":", b" ", b"  ", b":\t", b" : "]
URL_PIECES = ["/", "a", "b", "*", "$", "?", "=", ";", "%4A", "%4a", "%E3%83%84", "%C3%A9", "index.html", ".php",
              "#frag"]


def _body(rnd: random.Random) -> bytes:
    lines = []
    for _ in range(rnd.randint(0, 12)):
        key = rnd.choice(KEYS)
        if b"agent" in key.lower():
            value = rnd.choice(AGENTS)
        else:
            value = b"/" * (rnd.random() < 0.8) + b"".join(rnd.choices(PIECES, k=rnd.randint(0, 6)))
            if rnd.random() < 0.02:
                value = b"/" + b"a" * rnd.randint(MAX_LINE - 20, MAX_LINE + 5) + rnd.choice(PIECES)
        lines.append(key + rnd.choice(SEPARATORS) + value)
        if rnd.random() < 0.1:
            lines.append(b"")
    bom = rnd.choice([b"", b"", b"", b"\xef", b"\xef\xbb", b"\xef\xbb\xbf", b"\xef\xbf"])
    eol = rnd.choice([b"\n", b"\r\n", b"\r"])
    return bom + eol.join(lines) + rnd.choice([b"", eol])


def _url(rnd: random.Random) -> str:
    path = "".join(rnd.choices(URL_PIECES, k=rnd.randint(0, 6)))
    if rnd.random() < 0.01:
        path = "/" + "a" * (MAX_LINE - 12) + path
    return "https://example.com" + path


@pytest.mark.parametrize("seed", range(4))
def test_robotsrules_answers_as_googles_parser_on_random_robots_txt(seed):
    rnd = random.Random(seed)
    matcher = googlebot.RobotsMatcher()
    differences = []
    for _ in range(500):
        body = _body(rnd)
        rules = RobotsTxt(body, "wreck")
        for url in (_url(rnd) for _ in range(5)):
            google = matcher.OneAgentAllowedByRobots(body, "wreck", url)
            if rules.allowed(url) is not google:
                differences.append((body[:300], url[:200], google))
    assert not differences, differences[:3]
