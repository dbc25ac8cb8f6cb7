# The work per outlink between a page and the urlserver, in one process on
# one core, without sockets: what a spider worker spends extracting a page's
# links (spider/outlinks.py's extract, and htmlguard's count of its tags)
# and encoding its DONE, what the urlserver spends decoding that DONE, and
# the DONE's octets -- each with every link sent, and with the links that
# earlier DONEs carried left out (known=N, docs/protocol.txt 5.5.1: here
# every DONE is taken as committed at once, the best case).
#
# The pages are the benchmark web's (bench/webgen.py, the same generator as
# make bench: 30-100 links a page, mostly to the same host), a smaller copy
# of it written once under --work. With --realdocs the pages are instead
# the HTML files of bench/realdocs.py's Debian documentation trees (real
# pages written by others: 34 KB and up to 1,500 links a page), under the
# URLs that bench serves them at. report_us_per_page is a worker's whole
# analysis of a page (spider/report.py: the guard, extract, the record).
# Each figure is the least of --repeat passes of process CPU time, per page.
#
#   .venv/bin/python -m bench.outlink_bench [--hosts 20] [--pages 2000] [--realdocs] [--out FILE]
#       [--links FILE]
#
# --links writes every page's outlinks: run it in two trees (a copy of main
# beside a branch) and diff the files to see that a change of the link walk
# kept every link of every page, in its order.
"""CPU per page of link extraction and of the DONE's encoding and decoding; DONE octets."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench import webgen
from bench.realdocs import TREES
from wreck import urlnorm
from wreck.protocol import NEED_DATA, ControlConnection, Done, Role, Specific, Status
from wreck.spider import htmlguard, outlinks, report
from wreck.spider.fetch import FetchResult
from wreck.spider.sentlinks import SentLinks
from wreck.urlnorm import BaseUrl

HTML = b"text/html"
# The header block nginx sends with a static page (make bench's web server)
NGINX_HEAD = (b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 24 Nov 2026 13:38:13 GMT\r\n"
              b"Content-Type: text/html\r\nContent-Length: %d\r\nLast-Modified: Tue, 24 Nov 2026 13:32:00 GMT\r\n"
              b"Connection: keep-alive\r\nETag: \"6743a7e0-9543\"\r\nAccept-Ranges: bytes\r\n\r\n")


def load(web: webgen.Web) -> list[tuple[bytes, str]]:
    """(body, URL) of every page, host after host, each host's in crawl order."""
    pages = []
    for i in range(web.hosts):
        top = web.root / "www" / web.name(i)
        pages.append(((top / "index.html").read_bytes(), f"{web.base(i)}/"))
        pages += [((top / "p" / f"{k}.html").read_bytes(), f"{web.base(i)}/p/{k}.html") for k in range(web.per_host)]
    return pages


def load_realdocs(limit: int) -> list[tuple[bytes, str]]:
    """(body, URL) of the realdocs trees' HTML files (those installed), tree
    after tree, at most `limit` of them."""
    pages = []
    for host, _package, directory, _start, _kind in TREES:
        root = Path(directory)
        for path in sorted(root.rglob("*.html")) if root.is_dir() else ():
            pages.append((path.read_bytes(), f"http://{host}/{path.relative_to(root)}"))
    return pages[:limit]


def least(passes: int, work) -> float:
    """The least process CPU seconds of `passes` runs of work()."""
    best = float("inf")
    for _ in range(passes):
        t = time.process_time()
        work()
        best = min(best, time.process_time() - t)
    return best


def opened_pair() -> tuple[ControlConnection, ControlConnection]:
    """A urlserver end and a spider end (caps=committed) past the handshake."""
    server = ControlConnection(Role.SERVER, secret=b"", nonce=b"\x11" * 32)
    spider = ControlConnection(Role.CLIENT, secret=b"", nonce=b"\x22" * 32, name="bench", caps=("committed",))
    spider.receive_data(server.hello())
    spider.next_event()
    server.receive_data(spider.authenticate())
    server.next_event()
    spider.receive_data(server.welcome({}))
    spider.next_event()
    return server, spider


def dones(links_of_pages: list[tuple[str, ...]], leave_out: bool) -> dict:
    """Encode every page's DONE (leaving known links out or not), then decode them all."""
    server, spider = opened_pair()
    sent = SentLinks()
    encoded: list[bytes] = []
    t = time.process_time()
    for trans_id, links in enumerate(links_of_pages, 1):
        known = 0
        if leave_out:
            links, known = sent.leave_out(links)
        encoded.append(spider.send(Done(trans_id, Status.FETCHED, 200, Specific.OK, 5, links, known=known)))
        if leave_out:
            sent.sent(trans_id, links)
            sent.committed((trans_id,))
    encode_s = time.process_time() - t
    t = time.process_time()
    for data in encoded:
        server.receive_data(data)
        while server.next_event() is not NEED_DATA:
            pass
    decode_s = time.process_time() - t
    n = len(links_of_pages)
    return {"encode_us_per_done": round(1e6 * encode_s / n, 2), "decode_us_per_done": round(1e6 * decode_s / n, 2),
            "octets_per_done": round(sum(map(len, encoded)) / n, 1),
            "links_sent_per_done": round(sum(map(len, links_of_pages)) / n - sent.left_out / n, 1)}


def absolute_links(n: int) -> list[str]:
    """`n` distinct links as make bench's web writes them to other hosts
    (1,000 hosts of 100 pages, bench/webgen.py): most are new to a worker's
    cache of absolute links (wreck/urlnorm.py ABSOLUTE_REFS)."""
    web = webgen.Web(Path("/nonexistent"), 1000, 100_000, 18462)
    return [f"{web.base(i % web.hosts)}/p/{i // web.hosts}.html" for i in range(n)]


def absolute_us(passes: int, links: list[str]) -> float:
    """Least CPU us per link of resolving `links`, each new to the cache."""
    def work() -> None:
        if hasattr(urlnorm, "_absolute_refs"):
            urlnorm._absolute_refs.clear()
            resolve = BaseUrl("http://w0000.bench.test:18462/").resolve
        else:  # a tree before the cache moved from spider/outlinks.py (a copy of main, compared)
            outlinks._absolute.clear()  # type: ignore[attr-defined]
            resolve = outlinks._resolve_absolute  # type: ignore[attr-defined]
        for link in links:
            resolve(link)
    return round(1e6 * least(passes, work) / len(links), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--pages", type=int, default=2000, help="pages in all, over every host")
    parser.add_argument("--realdocs", action="store_true",
                        help="the installed realdocs trees' pages (at most --pages) instead of the generated web")
    parser.add_argument("--work", default="/tmp/wreck-outlink-bench", help="where the web is written once")
    parser.add_argument("--repeat", type=int, default=3, help="passes; the least CPU time counts")
    parser.add_argument("--out", help="write the result JSON here too")
    parser.add_argument("--links", help="write every page's outlinks here, a line a page (URL, then its links, "
                        "tab-separated): two trees' extract compared by diff")
    args = parser.parse_args()
    if args.realdocs:
        pages = load_realdocs(args.pages)
    else:
        web = webgen.Web(Path(args.work) / f"web-{args.hosts}x{args.pages}", args.hosts, args.pages, 18462)
        webgen.generate(web)
        pages = load(web)
    n = len(pages)
    extracted = [outlinks.extract(body, url, HTML).outlinks for body, url in pages]
    if args.links:
        Path(args.links).write_text("".join("\t".join((url, *links)) + "\n"
                                            for (_, url), links in zip(pages, extracted, strict=True)))

    def extract_all() -> None:
        for body, url in pages:
            outlinks.extract(body, url, HTML)

    def guard_all() -> None:  # as a session does: counted once, for both
        for body, _ in pages:
            tags = htmlguard.count(body)
            htmlguard.heavy(body, tags)
            htmlguard.bound(body, tags=tags)

    results = [FetchResult(i, url, 1, http_code=200, connected=True, head=NGINX_HEAD % len(body), body=body,
                           content_type=HTML) for i, (body, url) in enumerate(pages)]

    def report_all() -> None:  # as a session does: count, then the whole analysis
        for result in results:
            report.report(result, result.key, None, {}, htmlguard.count(result.body))

    result = {
        "pages": n, "bytes_per_page": round(sum(len(b) for b, _ in pages) / n),
        "links_per_page": round(sum(map(len, extracted)) / n, 1),
        "extract_us_per_page": round(1e6 * least(args.repeat, extract_all) / n, 1),
        "htmlguard_us_per_page": round(1e6 * least(args.repeat, guard_all) / n, 1),
        "report_us_per_page": round(1e6 * least(args.repeat, report_all) / n, 1),
        "absolute_link_us": absolute_us(args.repeat, absolute_links(50_000)),
        "done_every_link": min((dones(extracted, False) for _ in range(args.repeat)),
                               key=lambda d: d["encode_us_per_done"] + d["decode_us_per_done"]),
        "done_known_left_out": min((dones(extracted, True) for _ in range(args.repeat)),
                                   key=lambda d: d["encode_us_per_done"] + d["decode_us_per_done"]),
    }  # fmt: skip
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
