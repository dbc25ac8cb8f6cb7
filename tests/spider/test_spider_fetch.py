# The fetch engine (spider.fetch + spider.report) against the local test
# web's hostile host: every case ends with the right status and specific
# code, within Timeout_Req, and the same engine goes on fetching after it.
from __future__ import annotations

import asyncio
import dataclasses
import resource
import socket

import pytest
import uvloop

from wreck.protocol import Specific, Status
from wreck.spider.fetch import Fetcher, FetchSettings, Request
from wreck.spider.report import report
from tests.spider_helpers import crawl_settings, self_signed, serve_tls
from tests.web import HOSTILE_IP, HOSTILE_NAME, HostileSpec, RunningWeb, SiteSpec

SPEC = SiteSpec(hosts=2, pages_per_host=5, hostile_spec=HostileSpec(
    drip_interval=0.2, drip_bytes=200, stall_seconds=20.0, big_bytes=8 << 20,
    bomb_inflated_bytes=256 << 20, big_chunked_cap=64 << 20, huge_headers_bytes=200 * 1024))
SETTINGS = FetchSettings.from_crawl(crawl_settings())
F, E, R, OK = Status.FETCH_ERROR, Status.ERROR, Status.REDIRECTION, Status.FETCHED

# path -> (status, specific codes accepted, literal HTTP code or None: any)
HOSTILE = {
    "/target": (OK, {Specific.OK}, 200),
    "/redirect/chain/50": (R, {Specific.REDIRECT}, 302),
    "/redirect/loop": (R, {Specific.REDIRECT}, 302),
    "/redirect/self": (R, {Specific.REDIRECT}, 302),
    "/redirect/relative": (R, {Specific.REDIRECT}, 302),
    "/redirect/no-location": (E, {Specific.HTTP_ERROR}, 302),
    "/redirect/non-http": (E, {Specific.HTTP_ERROR}, 302),
    "/slow-drip": (F, {Specific.TOO_SLOW}, 200),
    "/stall-after-headers": (F, {Specific.TOO_SLOW, Specific.TIMEOUT}, 200),
    "/no-answer": (F, {Specific.TOO_SLOW, Specific.TIMEOUT}, 0),
    "/close-without-response": (F, {Specific.RESET}, 0),
    "/headers-then-close": (OK, {Specific.OK}, 200),  # kept as received, marked WARC-Truncated: disconnect
    "/big": (E, {Specific.TOO_BIG}, 200),
    "/big-chunked": (E, {Specific.TOO_BIG}, 200),
    "/gzip-bomb": (E, {Specific.TOO_BIG}, 200),
    "/bad-gzip": (F, {Specific.DECODE_ERROR}, 200),
    "/bad-chunked": (F, {Specific.BAD_RESPONSE, Specific.RESET}, 200),
    "/malformed-status": (F, {Specific.BAD_RESPONSE}, None),
    "/malformed-headers": (F, {Specific.BAD_RESPONSE}, None),
    "/no-status-line": (F, {Specific.BAD_RESPONSE}, 0),
    "/reset-mid-body": (F, {Specific.RESET}, 200),
    "/huge-headers": (F, {Specific.HEADERS_TOO_BIG}, None),
    "/huge-header-line": (F, {Specific.HEADERS_TOO_BIG}, None),
    "/meta-refresh": (R, {Specific.META_REFRESH}, 200),
    "/doc.pdf": (OK, {Specific.OK}, 200),
    "/image.png": (OK, {Specific.OK}, 200),
    "/status/404": (E, {Specific.HTTP_ERROR}, 404),
    "/status/410": (E, {Specific.HTTP_ERROR}, 410),
    "/status/408": (F, {Specific.HTTP_ERROR}, 408),
    "/status/429": (F, {Specific.HTTP_ERROR}, 429),
    "/status/500": (F, {Specific.HTTP_ERROR}, 500),
    "/status/503": (F, {Specific.HTTP_ERROR}, 503),
}


@pytest.fixture(scope="module")
def web():
    with RunningWeb(SPEC, dns=False) as running:
        yield running


def fetch_all(jobs: list[tuple[str, str]], fs: FetchSettings = SETTINGS, *, tamper=None,
              after: tuple[str, str] | None = None, request: Request | None = None) -> dict:
    """Fetch (url, ip) jobs concurrently on one Fetcher; url -> (Report, result).

    `after` is fetched on the same Fetcher once every job has ended."""

    async def run():
        loop = asyncio.get_running_loop()
        results: dict = {}
        finished = asyncio.Event()

        def on_result(result):
            results[result.url] = (report(result, 1), result)
            if len(results) == len(jobs):
                finished.set()

        fetcher = Fetcher(loop, fs, on_result)
        for url, ip in jobs:
            immediate = fetcher.start(url, url, ip, *([request] if request else []))
            if immediate is not None:
                on_result(immediate)
        if tamper:
            tamper(fetcher)
        try:
            await asyncio.wait_for(finished.wait(), fs.timeout_req_ms / 1000 + 5)
            if after:
                jobs.append(after)
                finished.clear()
                fetcher.start("after", *after)
                await asyncio.wait_for(finished.wait(), fs.timeout_req_ms / 1000 + 5)
        finally:
            fetcher.close()
        return results

    return uvloop.run(run())


def hostile_url(web, path: str) -> str:
    return f"http://{HOSTILE_NAME}:{web.port}{path}"


def test_every_hostile_case_then_the_engine_goes_on(web):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    jobs = [(hostile_url(web, path), HOSTILE_IP) for path in HOSTILE]
    ordinary = web.url("h1.wreck.test", "/")
    got = fetch_all(jobs, after=(ordinary, web.site.addresses()["h1.wreck.test"]))
    failures = []
    for path, (status, specifics, code) in HOSTILE.items():
        rep, result = got[hostile_url(web, path)]
        o = rep.outcome
        if o.status is not status or o.specific not in specifics or (code is not None and o.http_code != code):
            failures.append(f"{path}: {o.status.name}/{o.specific.name} {o.http_code} ({o.reason})")
        assert result.ms < SETTINGS.timeout_req_ms + 2000, path  # Timeout_Req bounds it
    assert not failures, "\n".join(failures)
    # memory stays bounded: the bomb and /big never exceed Max_Doc_Size in RAM
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024
    # ... and the same engine fetched an ordinary page after all that
    assert got[ordinary][0].outcome.specific is Specific.OK and got[ordinary][0].outlinks


def test_redirect_targets_and_retry_after(web):
    got = fetch_all([(hostile_url(web, p), HOSTILE_IP) for p in
                     ("/redirect/relative", "/redirect/chain/3", "/meta-refresh", "/status/503")])
    assert got[hostile_url(web, "/redirect/relative")][0].outcome.new_url == hostile_url(web, "/target")
    assert got[hostile_url(web, "/redirect/chain/3")][0].outcome.new_url == hostile_url(web, "/redirect/chain/2")
    assert got[hostile_url(web, "/meta-refresh")][0].outcome.new_url == hostile_url(web, "/target")
    assert got[hostile_url(web, "/status/503")][0].outcome.retry_after == SPEC.hostile_spec.retry_after


def test_html_page_links_and_stored_document(web):
    host = "h0.wreck.test"
    url = web.url(host, "/")
    rep, result = fetch_all([(url, web.site.addresses()[host])])[url]
    assert rep.outcome.status is OK and rep.record.success
    assert rep.outlinks and all(link.startswith("http://") for link in rep.outlinks)
    doc = rep.record.document
    assert doc.startswith(b"HTTP/1.1 200") and b"\r\n\r\n" in doc
    head, _, body = doc.partition(b"\r\n\r\n")
    assert b"<html" in body.lower() and result.head.endswith(b"\r\n\r\n")


def test_connect_refused_and_forbidden_address():
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    refused = f"http://refused.wreck.test:{port}/"
    public_only = FetchSettings.from_crawl(crawl_settings(allow_net=()))
    got = fetch_all([(refused, "127.0.0.1")])
    assert got[refused][0].outcome[:2] == (F, Specific.CONNECT_FAILED)
    forbidden = fetch_all([(refused, "127.0.0.1")], public_only)[refused][0]
    assert forbidden.outcome[:2] == (E, Specific.FORBIDDEN_ADDRESS)
    mapped = fetch_all([(refused, "::ffff:127.0.0.1")], public_only)[refused][0]
    assert mapped.outcome[:2] == (E, Specific.FORBIDDEN_ADDRESS)


def test_other_schemes_are_bad_urls():
    for url in ("ftp://files.wreck.test/x", "file:///etc/passwd", "gopher://g.wreck.test/"):
        assert fetch_all([(url, "127.0.0.1")])[url][0].outcome[:2] == (E, Specific.BAD_URL)


def test_open_socket_check_is_a_second_line_of_defence():
    url = "http://late.wreck.test:9/"

    def revoke(fetcher):  # the pre-check passed; now the policy changes under it
        fetcher.allow.networks = ()
        fetcher.allow._cache.clear()

    got = fetch_all([(url, "127.0.0.1")], tamper=revoke)
    assert got[url][0].outcome[:2] == (E, Specific.FORBIDDEN_ADDRESS)


def test_tls_failure_with_verification_on(tmp_path):
    context = self_signed(tmp_path, "tls.wreck.test")

    async def run():
        server = await serve_tls(context)
        port = server.sockets[0].getsockname()[1]
        url = f"https://tls.wreck.test:{port}/"
        results = []
        done = asyncio.Event()
        fetcher = Fetcher(asyncio.get_running_loop(), SETTINGS,
                          lambda r: (results.append(r), done.set()))
        fetcher.start(url, url, "127.0.0.1")
        await asyncio.wait_for(done.wait(), 10)
        fetcher.close()
        server.close()
        return results[0]

    result = uvloop.run(run())
    assert report(result, 1).outcome[:2] == (F, Specific.TLS_ERROR)


def test_bytes_beyond_a_response_do_not_become_the_next_response(web):
    """/length-mismatch sends more than its Content-Length on a connection
    libcurl would keep: the next request of that host gets a fresh one."""
    served = sum(r.target == "/target" for r in web.log.records())

    async def run():
        fetcher = Fetcher(asyncio.get_running_loop(), SETTINGS, None)
        results = []
        for path in ("/length-mismatch", "/target"):
            done = asyncio.Event()
            fetcher.on_result = lambda r: (results.append(r), done.set())
            fetcher.start(path, hostile_url(web, path), HOSTILE_IP)
            await asyncio.wait_for(done.wait(), 10)
            await asyncio.sleep(0.2)  # the connection idles in libcurl's cache, as between two URLs
        fetcher.close()
        return results

    first, second = uvloop.run(run())
    assert report(first, 1).outcome.specific is Specific.OK
    assert report(second, 1).outcome.specific is Specific.OK and b"You have arrived" in second.body
    # really asked for (a record lands just after its response: wait for it)
    web.log.wait_for(lambda records: sum(r.target == "/target" for r in records) == served + 1)


def test_a_content_type_with_bytes_that_are_not_utf8_still_ends_its_transfer(web):
    """Issue 14, finding 1: 'name=\\xff.pdf' or a Latin-1 'charset=\\xe9' in
    Content-Type; each transfer reports, the GET and the HEAD path alike."""
    paths = ("/header-bytes/pdf", "/header-bytes/charset")
    got = fetch_all([(hostile_url(web, p), HOSTILE_IP) for p in paths])
    pdf = got[hostile_url(web, "/header-bytes/pdf")]
    assert pdf[0].outcome[:2] == (OK, Specific.OK) and pdf[1].content_type == b"application/pdf; name=\xff.pdf"
    page = got[hostile_url(web, "/header-bytes/charset")][0]
    assert page.outcome[:2] == (OK, Specific.OK) and page.outlinks == (hostile_url(web, "/target"),)
    html_only = dataclasses.replace(SETTINGS, accept_type=("text/html",))
    for path, specific in (("/header-bytes/pdf", Specific.UNWANTED_TYPE), ("/header-bytes/charset", Specific.OK)):
        url = hostile_url(web, path)
        headed = fetch_all([(url, HOSTILE_IP)], html_only, request=Request(head=True))[url][0]
        assert headed.outcome.specific is specific, (path, headed.outcome)


def test_a_failure_while_ending_one_transfer_ends_it_alone(web):
    """A bug in completion handling costs that transfer (reported with a
    reason), never the others that libcurl finished in the same read."""
    urls = [hostile_url(web, p) for p in ("/target", "/doc.pdf", "/image.png")]
    doomed = urls[1]

    def tamper(fetcher):
        done = fetcher._done

        def flaky(handle, code, message):
            if handle.slot.url == doomed:
                raise RuntimeError("boom")
            done(handle, code, message)

        fetcher.curl.on_done = flaky

    got = fetch_all([(u, HOSTILE_IP) for u in urls], tamper=tamper)
    assert got[doomed][0].outcome[:2] == (F, Specific.INTERNAL) and "boom" in got[doomed][0].outcome.reason
    assert all(got[u][0].outcome.specific is Specific.OK for u in urls if u != doomed)


def test_a_body_fetch_cut_at_size_keeps_what_arrived_and_a_stall_is_a_failure(web):
    """Issue 14, finding 3: a robots.txt (a body= fetch) of 50 MB keeps its
    first Max_Doc_Size bytes; one that stalls after its headers fails."""
    huge, stall = hostile_url(web, "/robots/huge.txt"), hostile_url(web, "/robots/stall.txt")
    got = fetch_all([(huge, HOSTILE_IP), (stall, HOSTILE_IP)], request=Request(keep_partial=True))
    rep, result = got[huge]
    assert rep.outcome[:2] == (E, Specific.TOO_BIG) and result.http_code == 200
    assert result.partial.startswith(b"User-agent: *\nDisallow: /\n") and len(result.partial) == SETTINGS.max_doc_size
    assert rep.record.document == result.head  # the stored record keeps no body (docs/protocol.txt 6.3)
    assert got[stall][0].outcome.status is F and not got[stall][1].partial
    page_rep, page = fetch_all([(huge, HOSTILE_IP)])[huge]  # a page fetch keeps nothing
    assert page_rep.outcome.specific is Specific.TOO_BIG and page.partial == b"" and page.body == b""


# -- what the spider keeps for the archive (docs/protocol.txt 6.3) --------------


def test_a_conditional_request_is_kept_as_sent_with_address_and_outlinks(web):
    host = "h0.wreck.test"
    url = web.url(host, "/")
    ip = web.site.addresses()[host]
    request = Request(etag='"v1"', last_modified="Tue, 01 Jan 2030 00:00:00 GMT")
    rep, _ = fetch_all([(url, ip)], request=request)[url]
    record = rep.record
    assert record.request.startswith(b"GET / HTTP/1.1\r\n") and record.request.endswith(b"\r\n\r\n")
    assert f"Host: {host}:{web.port}".encode() in record.request
    assert b'If-None-Match: "v1"' in record.request
    assert b"If-Modified-Since: Tue, 01 Jan 2030 00:00:00 GMT" in record.request
    assert b"User-Agent: " in record.request
    assert record.ip == ip and record.truncated == ""
    assert record.outlinks == rep.outlinks and record.outlinks


def test_each_request_on_a_reused_connection_is_kept_whole_and_alone(web):
    """fetch.py turns libcurl's VERBOSE off once a request has gone out and
    on again for the next: every record keeps its own request, once, and a
    HEAD-first fetch the GET's."""
    host = "h0.wreck.test"
    ip = web.site.addresses()[host]
    root = web.url(host, "/")
    links = [link for link in fetch_all([(root, ip)])[root][0].outlinks if link.startswith(f"http://{host}:")]
    got = fetch_all([(root, ip)], after=(links[0], ip))  # the second on the first's slot and connection
    headed = fetch_all([(root, ip)], dataclasses.replace(SETTINGS, accept_type=("text/html",)),
                       request=Request(head=True))[root][0]
    for rep, url in ((got[root][0], root), (got[links[0]][0], links[0]), (headed, root)):
        path = url.split(str(web.port), 1)[1]
        assert rep.record.request.startswith(f"GET {path} HTTP/1.1\r\n".encode())
        assert rep.record.request.count(b"\r\n\r\n") == 1 and rep.record.request.endswith(b"\r\n\r\n")
    assert headed.outcome.specific is Specific.OK and got[root][0].outcome.specific is Specific.OK


def test_a_body_cut_at_size_says_length_and_one_cut_by_time_says_time(web):
    fs = dataclasses.replace(SETTINGS, max_doc_size=1 << 20, timeout_req_ms=1500)
    got = fetch_all([(hostile_url(web, "/big"), HOSTILE_IP), (hostile_url(web, "/stall-after-headers"), HOSTILE_IP)],
                    fs)
    big = got[hostile_url(web, "/big")][0]
    assert big.outcome.specific is Specific.TOO_BIG and big.record.truncated == "length"
    stalled = got[hostile_url(web, "/stall-after-headers")][0]
    assert stalled.record.truncated == "time" and stalled.record.document.startswith(b"HTTP/1.1 200")
    assert stalled.record.request.startswith(b"GET /stall-after-headers HTTP/1.1\r\n")
    assert HOSTILE_NAME.encode() in stalled.record.request


def test_a_refused_connection_keeps_no_request(web):
    got = fetch_all([("http://127.0.0.1:1/", "127.0.0.1")])
    record = got["http://127.0.0.1:1/"][0].record
    assert record.document == b"" and record.truncated == "" and not record.outlinks


# -- header blocks: gathered by libcurl's callback, bounded once complete -------

def _raw_responses(responses: dict[str, bytes]):
    """A loopback server answering GET PATH with responses[PATH] as is, then closing."""
    import socketserver
    import threading

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            data = b""
            while b"\r\n\r\n" not in data and (chunk := self.request.recv(4096)):
                data += chunk
            path = data.split(b" ", 2)[1].decode() if data.count(b" ") >= 2 else "/"
            self.request.sendall(responses.get(path, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_header_block_over_the_bound_fails_with_or_without_a_body_and_1xx_blocks_are_dropped():
    filler = b"".join(b"X-Filler-%05d: %s\r\n" % (i, b"h" * 980) for i in range(400))  # 400 KB
    page = b"<html><body><a href='/next'>next</a></body></html>"
    ok_head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(page)
    responses = {
        "/no-body": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + filler[:70_000] + b"Content-Length: 0\r\n\r\n",
        "/over-libcurl": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + filler + b"Content-Length: 4\r\n\r\nbody",
        "/with-body": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + filler[:100_000] + b"Content-Length: 4\r\n\r\nbody",
        "/continue": b"HTTP/1.1 100 Continue\r\nX-Early: 1\r\n\r\n" + ok_head + page,
    }
    server = _raw_responses(responses)
    try:
        base = "http://127.0.0.1:%d" % server.server_address[1]
        jobs = [(base + path, "127.0.0.1") for path in responses]
        html_only = dataclasses.replace(SETTINGS, accept_type=("text/html",))
        for fs in (SETTINGS, html_only):  # libcurl's callback, and Python's a line for the type filter
            got = fetch_all(list(jobs), fs)
            for path in ("/no-body", "/over-libcurl", "/with-body"):
                rep, result = got[base + path]
                assert rep.outcome[:2] == (F, Specific.HEADERS_TOO_BIG), (path, fs.accept_type, rep.outcome)
                assert result.body == b"" and 60_000 < len(result.head) <= 64 * 1024 and result.head.endswith(b"\r\n")
                assert result.head.startswith(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Filler-00000: ")
            rep, result = got[base + "/continue"]
            assert rep.outcome.specific is Specific.OK and result.head == ok_head and result.body == page
            assert result.content_type == b"text/html" and rep.outlinks == (base + "/next",)
    finally:
        server.shutdown()
        server.server_close()
