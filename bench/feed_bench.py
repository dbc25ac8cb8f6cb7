# Feed parser choice, measured: fastfeedparser against feedparser on a
# realistic news feed (RSS 2.0 and Atom, 50 items, each with a title, link,
# guid, date, author, categories, an HTML description and content:encoded of
# a few KB: about what a newspaper's feed weighs), plus the spider's whole
# path (spider/feeds.py: parse, normalise links, fingerprint guids, checksum).
# One core, best of several rounds. Run: python -m bench.feed_bench
"""Feed parsing rates: fastfeedparser vs feedparser."""

from __future__ import annotations

import json
import random
import time

import fastfeedparser
import feedparser

from wreck.spider import feeds

ITEMS = 50
ROUNDS = 5


def _words(rng: random.Random, n: int) -> str:
    vocab = "the news city council budget vote market storm river school election court".split()
    return " ".join(rng.choice(vocab) for _ in range(n))


def rss(rng: random.Random) -> bytes:
    items = []
    for k in range(ITEMS):
        body = "".join(f"<p>{_words(rng, 60)}</p>" for _ in range(6))
        items.append(
            f"<item><title>{_words(rng, 8)}</title><link>https://news.example/2026/11/story-{k}.html</link>"
            f'<guid isPermaLink="false">news-{k}-{rng.getrandbits(32)}</guid>'
            f"<pubDate>Sun, 22 Nov 2026 0{k % 10}:00:00 GMT</pubDate><dc:creator>Reporter {k}</dc:creator>"
            f"<category>Local</category><category>Politics</category>"
            f"<description><![CDATA[<p>{_words(rng, 40)}</p>]]></description>"
            f"<content:encoded><![CDATA[{body}]]></content:encoded></item>")
    return ('<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" '
            'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>Example News</title>'
            "<link>https://news.example/</link><description>All the news</description>"
            + "".join(items) + "</channel></rss>").encode()


def atom(rng: random.Random) -> bytes:
    entries = []
    for k in range(ITEMS):
        body = "".join(f"<p>{_words(rng, 60)}</p>" for _ in range(6))
        entries.append(
            f'<entry><title>{_words(rng, 8)}</title><link href="https://news.example/story-{k}.html"/>'
            f"<id>tag:news.example,2026:{k}</id><updated>2026-11-22T0{k % 10}:00:00Z</updated>"
            f"<author><name>Reporter {k}</name></author><summary>{_words(rng, 40)}</summary>"
            f'<content type="html"><![CDATA[{body}]]></content></entry>')
    return ('<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
            "<title>Example News</title><id>https://news.example/</id><updated>2026-11-22T00:00:00Z</updated>"
            + "".join(entries) + "</feed>").encode()


def json_feed(rng: random.Random) -> bytes:
    items = [{"id": f"news-{k}", "url": f"https://news.example/story-{k}.html", "title": _words(rng, 8),
              "content_html": "".join(f"<p>{_words(rng, 60)}</p>" for _ in range(6))} for k in range(ITEMS)]
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "Example News",
                       "items": items}).encode()


def per_parse_us(fn, body: bytes) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        n, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < 0.3:
            fn(body)
            n += 1
        best = min(best, elapsed / n)
    return best * 1e6


def main() -> None:
    rng = random.Random(2026)
    bodies = {"rss": rss(rng), "atom": atom(rng), "json": json_feed(rng)}
    print(f"feeds of {ITEMS} items: " + ", ".join(f"{k} {len(v) // 1024} KB" for k, v in bodies.items()))
    for kind, body in bodies.items():
        fast = fastfeedparser.parse(body)
        slow = feedparser.parse(body)
        print(f"{kind:5s} items: fastfeedparser {len(fast.entries)}, feedparser {len(slow.entries)}")
        row = [f"fastfeedparser {per_parse_us(fastfeedparser.parse, body):8.0f} us",
               f"fastfeedparser (links only) {per_parse_us(lambda b: fastfeedparser.parse(b, include_content=False, include_tags=False, include_media=False, include_enclosures=False), body):8.0f} us",  # noqa: E501
               f"feedparser {per_parse_us(feedparser.parse, body):8.0f} us",
               f"spider/feeds.py {per_parse_us(lambda b: feeds.parse(b, 'https://news.example/feed', kind), body):8.0f} us"]  # noqa: E501
        print(f"{kind:5s} " + " | ".join(row))


if __name__ == "__main__":
    main()
