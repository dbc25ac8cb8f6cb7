"""A sitemap bomb (issue 14, finding 5: 49 KB gzipped, 48 MB of tiny
elements inflated, took a worker to 1.6 GiB) is parsed in bounded memory:
a subprocess builds the bomb, then parses it, and reports how much its
peak resident set grew during the parse."""

from __future__ import annotations

import json
import subprocess
import sys

from wreck.spider import sitemaps

# Growth of the peak RSS allowed while parsing: the inflated bytes (12 MB
# here) and lxml's parser state; the old parser grew by about 1 GiB on it.
MAX_GROWTH_MIB = 64

PARSE_BOMB = """
import gzip, json, resource, sys
from wreck.spider import sitemaps
raw = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
       + b"<url><loc>http://s.test/first</loc></url>" + b"<a/>" * 3_000_000 + b"</urlset>")
body = gzip.compress(raw, 9)
del raw
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
got = sitemaps.parse(body, "http://s.test/sitemap.xml.gz")
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wire": len(body), "grew_kib": after - before, "urls": list(got.urls)}))
"""


def test_a_sitemap_bomb_is_parsed_in_bounded_memory():
    run = subprocess.run([sys.executable, "-c", PARSE_BOMB], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["wire"] < 100_000  # a bomb indeed: tens of KB on the wire
    assert got["urls"] == ["http://s.test/first"]  # what came before the bound is kept
    assert got["grew_kib"] < MAX_GROWTH_MIB * 1024, got


def test_elements_past_the_bound_are_not_read():
    body = (b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + b"<x/>" * 10
            + b"<url><loc>http://s.test/late</loc></url></urlset>")
    assert sitemaps.parse(body, "http://s.test/s.xml", max_elements=5).urls == ()
    assert sitemaps.parse(body, "http://s.test/s.xml").urls == ("http://s.test/late",)
