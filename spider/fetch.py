# One worker's fetch engine: a pool of reusable easy handles ("slots") on a
# CurlLoop. Each slot's options and callbacks that never change are set
# once; a transfer sets only its URL and its connect-to address.
#
# - The urlserver's IP is the IP used: CONNECT_TO "::IP:" sends the URL's
#   host and port to that address; libcurl never resolves a name. A slot's
#   OPENSOCKETFUNCTION refuses any address AllowNet does not admit, as a
#   second line of defence. Only http and https are enabled. PROXY '' turns
#   off libcurl's http_proxy/HTTPS_PROXY/ALL_PROXY environment variables: a
#   proxy would resolve and dial the URL's host itself, past both checks.
#   libcurl's DNS cache is off: it would only hold those IP literals, one
#   entry an address for a minute, and libcurl walks all of it for stale
#   entries at every transfer (6-8 % of the fetch loop's CPU with 500
#   addresses: bench/results/2026-11-24-s10-spider10.md).
#   Redirects are not followed (the urlserver schedules them); Alt-Svc and
#   HSTS stay off (libcurl's default without their cache options).
# - Time: TIMEOUT_MS = Timeout_Req, CONNECTTIMEOUT_MS, and a low-speed limit
#   so a slow drip frees its slot long before Timeout_Req.
# - Size: MAXFILESIZE aborts on a Content-Length that is already too big;
#   the write callback counts decoded bytes, so a gzip bomb stops at
#   Max_Doc_Size too. A body= fetch (robots.txt) cut so keeps the first
#   Max_Doc_Size bytes as FetchResult.partial (RFC 9309 2.5: parse at least
#   the first 500 KiB); for that, libcurl's MAXFILESIZE is off on its slot,
#   the write callback cutting at the same size.
# - Headers: libcurl hands each header line to HEADERFUNCTION, about nine a
#   page; that callback is a bytearray's own extend (no Python call a line),
#   and the last block (from the last status line: 1xx answers come first)
#   is taken when the transfer ends. Its bound, MAX_HEADER_BYTES, is checked
#   once the block is complete: at the first body byte (returning 0 there
#   ends the transfer before the body is read) and at the end (a response
#   without a body; libcurl's own bound, 300 KiB a response and 100 KiB a
#   line, holds memory meanwhile). Only with a type filter (accept_type)
#   is the callback Python's, a line at a time, to end the transfer at the
#   blank line.
# - Framing: after a plain HTTP/1.x response, bytes already waiting on its
#   connection were sent beyond the response's length (a desync, as from
#   the hostile /length-mismatch). libcurl would keep the connection and
#   read them as the next response of that host; like browsers, the slot
#   discards them and shuts the connection so libcurl opens a fresh one.
# - Header values are read from the header lines as received, as bytes
#   (RFC 9110 5.5: field values are octets, not UTF-8); getinfo's decoded
#   strings raise on a byte such as 'name=\xff.pdf' (issue 14, finding 1).
#   A failure while ending a transfer ends that transfer alone, as INTERNAL
#   with the exception as its reason (CurlLoop's on_failed).
# - Type: with a content-type filter (accept_type), the header callback
#   ends a 2xx transfer whose Content-Type is not accepted at the blank
#   line that closes its header block, before any body byte is read.
# - HEAD first (the assignment's head=1): a HEAD whose 2xx answer names an
#   unwanted type, or that redirects, ends the transaction without a GET;
#   any other answer leads to the GET on the same slot. A HEAD refused
#   (405, 501), failed, or contradicted by the GET's type marks the host's
#   HEAD as unusable (FetchResult.head_unusable), which the urlserver
#   remembers. A HEAD's connection is not reused: a server that sends a
#   body after a HEAD's headers would otherwise poison the next request.
# - Content-Encoding: libcurl decodes what it knows and fails on the first
#   body byte of a coding it does not. A coding no browser knows either
#   ('utf-8', 'none': a misconfigured server) is shown by browsers as sent,
#   so the page is asked again with libcurl's decoding off, its body stored
#   as sent: a page fetch is reported with again=raw (DECODE_ERROR, its
#   header block recorded), and the urlserver hands it out again with raw=1
#   after the host's delay (docs/protocol.txt 5.3, 5.5: never two requests
#   inside the delay); the urlserver's own fetches (robots.txt, feeds,
#   sitemaps) and a recrawl's are made again at once on the same slot
#   (again_raw), as raw=1 does not reach their assignments, and so is
#   every fetch for an urlserver that did not announce raw_again=1 (an
#   older one, which would end the URL on the DONE); a coding browsers decode but this
#   libcurl does not (zstd without its zstd) stays DECODE_ERROR. Bytes
#   after a compressed stream's end (CURLE_WRITE_ERROR once it is decoded
#   whole) are dropped, as Chrome drops them: the transfer is complete.
# - For the archive (docs/protocol.txt 6.3): the request header block as
#   libcurl sent it (DEBUGFUNCTION, HEADER_OUT chunks only; a HEAD's is
#   replaced by its GET's). VERBOSE, which HEADER_OUT needs, also makes
#   libcurl hand the debug function every response header line and a copy
#   of every body byte (pycurl makes each a Python bytes): so a slot turns
#   VERBOSE off once its request's block is complete (ends with the blank
#   line), when libcurl returns from the socket_action that sent it
#   (CurlLoop's after_action: pycurl refuses setopt inside libcurl's
#   callbacks), and on again for its next request (VERBOSE throughout cost
#   about 5 % of a worker's CPU: bench/results/2026-11-24-s9-spider9.md).
#   Also kept: the address connected to (PRIMARY_IP), and whether the body
#   was cut: "length" at Max_Doc_Size, "time" by the total or low-speed
#   timeout (curl code 28).
# - Cookie check (docs/protocol.txt 5.3.2, spider/cookies.py): a GET (a page,
#   robots.txt...) answered by a redirect to the URL itself that sets a cookie is
#   asked again once on the same slot with that cookie, as a browser does,
#   same transaction and clock; the record holds the second answer and the
#   request that carried the cookie. A HEAD answered so is not the end:
#   the GET follows and meets the check. Off with the crawl's cookies=0.
"""Fetcher: start(key, url, ip) -> FetchResult via on_result."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import select
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any

import pycurl

from wreck.protocol import Specific
from wreck.mediatype import accepts, media_type
from wreck.protocol.settings import CrawlSettings

from . import nofetch as nf
from .allownet import AllowNet
from .cookies import names_itself, retry_cookie
from .curlloop import CurlLoop

# Response header block bound. Real servers send 1-16 KB; libcurl itself
# refuses far more, and a 200 KB block is abuse, not a web page.
MAX_HEADER_BYTES = 64 * 1024
# libcurl's receive buffer (CURLOPT_BUFFERSIZE, default 16 KiB): a page of
# up to this size that has arrived is read in one recv and handed to the
# write callback in one piece, where 16 KiB took three of each for a 38 KB
# page. libcurl 8 keeps one such buffer per multi handle, not per transfer.
RECV_BUFFER_BYTES = 256 * 1024
# Bytes of a desynced connection read and dropped before it is shut down;
# more than a socket buffer's worth is not worth draining.
MAX_STRAY_BYTES = 256 * 1024
HTTP1 = (pycurl.CURL_HTTP_VERSION_1_0, pycurl.CURL_HTTP_VERSION_1_1)
# Low-speed rule: a transfer averaging under LOW_SPEED_BYTES per second for
# its low-speed window (a quarter of Timeout_Req, 1-30 s) is ended.
LOW_SPEED_BYTES = 1_000
LOW_SPEED_WINDOW_MIN_S = 1
LOW_SPEED_WINDOW_MAX_S = 30
# Keep each request's header block for the archive (the opening comment);
# off only to measure its cost (bench/spider_bench.py --no-request-capture).
KEEP_REQUEST = True
# curl's CURLE_OPERATION_TIMEDOUT: the total timeout or the low-speed rule ended it.
CURL_TIMEOUT = 28
HEADER_OUT = pycurl.INFOTYPE_HEADER_OUT  # read per debug call: a name of this module
REDIRECT_CODES = (301, 302, 303, 307, 308)  # a HEAD answered so is reported as the redirect
ACCEPT = b"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@dataclasses.dataclass(frozen=True)
class FetchSettings:
    """What a fetch needs from the handshake's CrawlSettings."""

    user_agent: str
    timeout_req_ms: int
    connect_timeout_ms: int
    max_doc_size: int
    allow_net: tuple[str, ...] = ()
    ca_file: str | None = None  # None: the system's default bundle
    accept_type: tuple[str, ...] = ()  # media types a page may have; empty: any
    cookies: bool = True  # a redirect to the URL itself that sets a cookie is asked again with it
    raw_again: bool = False  # the urlserver hands a page out again with raw=1 after again=raw

    @classmethod
    def from_crawl(cls, s: CrawlSettings) -> FetchSettings:
        return cls(s.user_agent, s.timeout_req_ms, min(s.connect_timeout_ms, s.timeout_req_ms),
                   s.max_doc_size, s.allow_net, accept_type=s.accept_type, cookies=s.cookies,
                   raw_again=s.raw_again)

    @property
    def low_speed_window_s(self) -> int:
        quarter = self.timeout_req_ms // 4000
        return max(LOW_SPEED_WINDOW_MIN_S, min(LOW_SPEED_WINDOW_MAX_S, quarter))


@dataclasses.dataclass(frozen=True, slots=True)
class Request:
    """How to fetch one URL, beyond the URL and address."""

    etag: str | None = None  # If-None-Match (a recrawl's stored validator)
    last_modified: str | None = None  # If-Modified-Since
    head: bool = False  # HEAD first: the URL's path suggests an unwanted type
    filter_type: bool = True  # apply accept_type (not for body= fetches: robots.txt...)
    keep_partial: bool = False  # cut at Max_Doc_Size, keep the bytes received (body= fetches)
    nofetch: nf.NoFetch | None = None  # a record-only assignment (nofetch=): connect nowhere
    raw: bool = False  # raw=1: libcurl's decoding off, the body taken as sent (a coding no browser knows)

    def headers(self) -> list[bytes]:
        out = [ACCEPT]
        if self.etag:
            out.append(b"If-None-Match: " + self.etag.encode("latin-1"))
        if self.last_modified:
            out.append(b"If-Modified-Since: " + self.last_modified.encode("latin-1"))
        return out


PLAIN = Request()


@dataclasses.dataclass(slots=True)
class FetchResult:
    """Everything known about one finished transfer."""

    key: Any
    url: str
    ms: int
    curl_code: int = 0
    message: str = ""
    http_code: int = 0
    connected: bool = False
    aborted: Specific | None = None
    head: bytes = b""  # last header block as received, blank line included
    body: bytes = b""  # decoded body (empty after an abort for size)
    content_type: bytes | None = None
    head_unusable: str = ""  # why this host's HEAD cannot be trusted ('' if it can, or unused)
    partial: bytes = b""  # Request.keep_partial: the first Max_Doc_Size bytes of a body cut at size
    request: bytes = b""  # the last request's header block as sent (for the archive)
    ip: str = ""  # the address connected to
    again: str = ""  # 'raw': a page in codings no browser knows, to ask again with raw=1 (again=raw on DONE)
    truncated: str = ""  # "length", "time" or "disconnect" when the body was cut, as WARC-Truncated says
    nofetch: str = ""  # a record-only transaction: the urlserver's reason (spider/nofetch.py)
    refused: tuple[str, ...] = ()  # ... and the addresses it refused


class _Handover:
    """A new socket for libcurl. pycurl gives libcurl a duplicate of its
    descriptor (fileno()), then drops this object, which closes ours: the
    socket then has one descriptor, libcurl's, and leaves CurlLoop's epoll
    set when libcurl closes it (curlloop.py). A socket object collected
    open would also cost a ResourceWarning."""

    __slots__ = ("sock",)

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def fileno(self) -> int:
        return self.sock.fileno()

    def __del__(self) -> None:
        self.sock.close()


class _Slot:
    """An easy handle with its callbacks; one transfer at a time."""

    __slots__ = ("handle", "key", "url", "ip", "started", "head", "body", "size",
                 "max_size", "aborted", "allow", "poll", "request", "accept", "filtering",
                 "in_head", "head_type", "sent", "loud", "quiet", "raw", "cookie")

    def __init__(self, fs: FetchSettings, allow: AllowNet, quiet: list[_Slot]) -> None:
        c = self.handle = pycurl.Curl()
        self.quiet = quiet  # the Fetcher's slots whose request is complete: VERBOSE off (the top)
        self.loud = False  # VERBOSE is on
        self.raw = False  # the body is taken as sent: libcurl's decoding off (again_raw)
        self.cookie = False  # asked again with a cookie (again_with_cookie): its request headers differ
        self.allow = allow
        self.max_size = fs.max_doc_size
        self.accept = fs.accept_type
        self.request = PLAIN
        self.filtering = False  # the header callback is the bytearray's (the opening comment)
        self.head = bytearray()  # every header line of the transfer, as received
        self.poll = select.poll()  # for shut_if_desynced: no fd-number limit, unlike select()
        c.slot = self  # pycurl handles accept attributes (read by tests; Fetcher keeps its own map)
        c.setopt(pycurl.NOSIGNAL, 1)
        c.setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
        c.setopt(pycurl.FOLLOWLOCATION, 0)
        c.setopt(pycurl.PROXY, "")  # never a proxy, whatever the environment says
        c.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2TLS)
        c.setopt(pycurl.PIPEWAIT, 1)
        c.setopt(pycurl.ACCEPT_ENCODING, "")  # every encoding this libcurl decodes
        c.setopt(pycurl.USERAGENT, fs.user_agent)
        c.setopt(pycurl.HTTPHEADER, [ACCEPT])
        c.setopt(pycurl.TIMEOUT_MS, fs.timeout_req_ms)
        c.setopt(pycurl.CONNECTTIMEOUT_MS, fs.connect_timeout_ms)
        c.setopt(pycurl.LOW_SPEED_LIMIT, LOW_SPEED_BYTES)
        c.setopt(pycurl.LOW_SPEED_TIME, fs.low_speed_window_s)
        c.setopt(pycurl.MAXFILESIZE_LARGE, fs.max_doc_size)
        c.setopt(pycurl.TCP_NODELAY, 1)
        # no DNS cache: every address is an IP literal (CONNECT_TO), and libcurl
        # walks its whole cache for stale entries at each transfer (the opening comment)
        c.setopt(pycurl.DNS_CACHE_TIMEOUT, 0)
        c.setopt(pycurl.BUFFERSIZE, RECV_BUFFER_BYTES)
        if fs.ca_file:
            c.setopt(pycurl.CAINFO, fs.ca_file)
        c.setopt(pycurl.WRITEFUNCTION, self._write)
        c.setopt(pycurl.HEADERFUNCTION, self.head.extend)
        c.setopt(pycurl.OPENSOCKETFUNCTION, self._open_socket)
        if KEEP_REQUEST:
            # HEADER_OUT reaches DEBUGFUNCTION only with VERBOSE; with a debug
            # function set, libcurl prints nothing itself
            c.setopt(pycurl.DEBUGFUNCTION, self._debug)

    def begin(self, key: Any, url: str, ip: str, request: Request = PLAIN) -> None:
        self.key, self.url, self.ip, self.started = key, url, ip, time.monotonic()
        self.body, self.size, self.aborted = [], 0, None
        self.head.clear()
        self.sent = []
        c = self.handle
        if KEEP_REQUEST and not self.loud:
            c.setopt(pycurl.VERBOSE, 1)
            self.loud = True
        c.setopt(pycurl.URL, url)
        c.setopt(pycurl.CONNECT_TO, [f"::[{ip}]:" if ":" in ip else f"::{ip}:"])
        if request is not self.request:
            c.setopt(pycurl.HTTPHEADER, request.headers())
            if request.keep_partial != self.request.keep_partial:
                # a Content-Length beyond the bound would end the transfer before any byte
                c.setopt(pycurl.MAXFILESIZE_LARGE, 0 if request.keep_partial else self.max_size)
        self.request = request
        if request.raw:  # reset by Fetcher._release
            c.setopt(pycurl.HTTP_CONTENT_DECODING, 0)
            self.raw = True
        filtering = bool(self.accept) and request.filter_type
        if filtering != self.filtering:
            c.setopt(pycurl.HEADERFUNCTION, self._header if filtering else self.head.extend)
            self.filtering = filtering
        self.in_head = self.filtering and request.head
        self.head_type = None
        if self.in_head:
            c.setopt(pycurl.NOBODY, 1)
            # a server may send a body after a HEAD's headers anyway; on a
            # reused connection those bytes would be read as the next answer
            c.setopt(pycurl.FORBID_REUSE, 1)

    def _again(self) -> None:
        """A second request in the same transaction: the first answer and
        request dropped (the second's replace them), the clock kept."""
        self.body, self.size, self.aborted = [], 0, None
        self.head.clear()
        self.sent = []
        if KEEP_REQUEST and not self.loud:
            self.handle.setopt(pycurl.VERBOSE, 1)
            self.loud = True

    def again_as_get(self, verdict: str) -> None:
        """After the HEAD: the GET, on this handle, same transaction and clock."""
        self.head_type = (media_type(self.content_type()), verdict)
        self._again()
        self.in_head = False
        self.handle.setopt(pycurl.HTTPGET, 1)
        self.handle.setopt(pycurl.FORBID_REUSE, 0)

    def again_raw(self) -> None:
        """After an answer in Content-Codings no browser knows: the same GET,
        its body taken as sent (libcurl's decoding off), same transaction."""
        self._again()
        self.handle.setopt(pycurl.HTTP_CONTENT_DECODING, 0)
        self.raw = True

    def again_with_cookie(self, cookie: str) -> None:
        """After a redirect to this URL that set a cookie: the same GET with
        the cookie (the opening comment), same transaction."""
        self._again()
        self.handle.setopt(pycurl.HTTPHEADER, [*self.request.headers(), b"Cookie: " + cookie.encode("latin-1")])
        self.cookie = True

    def cookie_check(self, result: FetchResult) -> str | None:
        """The Cookie to ask this URL again with, when its answer (`result`,
        a redirect) was a redirect to itself that set one (spider/cookies.py),
        from a GET not yet asked again so; else None."""
        if result.curl_code or self.cookie or self.in_head:
            return None
        if not names_itself(self.handle.getinfo_raw(pycurl.REDIRECT_URL) or b"", self.url):
            return None
        return retry_cookie(self.url, result.head)

    def _debug(self, kind: int, data: bytes) -> None:
        if kind == HEADER_OUT:
            self.sent.append(data)
            if data.endswith(b"\r\n\r\n"):  # the whole block (a request with a body: none here)
                self.quiet.append(self)

    def quieten(self) -> None:
        """VERBOSE off until the next request (the opening comment)."""
        if self.loud and self.sent:
            self.handle.setopt(pycurl.VERBOSE, 0)
            self.loud = False

    def _write(self, data: bytes) -> int | None:
        if not self.size and len(self.head) > MAX_HEADER_BYTES and self._head_too_big():
            return 0  # the first body bytes: the header block is complete (the opening comment)
        size = self.size + len(data)
        if size > self.max_size:
            self.aborted = Specific.TOO_BIG
            if self.request.keep_partial:
                self.body.append(data[: self.max_size - self.size])
            return 0  # fewer bytes than given: libcurl aborts with a write error
        self.size = size
        self.body.append(data)
        return None

    def _header(self, line: bytes) -> int | None:
        """A header line, where the type filter applies (the opening comment)."""
        self.head += line
        if not self.in_head and line in (b"\r\n", b"\n"):
            if len(self.head) > MAX_HEADER_BYTES and self._head_too_big():
                return 0
            if self._unwanted():
                self.aborted = Specific.UNWANTED_TYPE
                return 0  # before the body: libcurl ends the transfer with a write error
        return None

    def _unwanted(self) -> bool:
        """The header block just ended: a 2xx answer of a type the filter refuses?"""
        block = self.block()
        status = block[: block.find(b"\n")].split(b" ", 2)
        if len(status) < 2 or not status[1].startswith(b"2"):
            return False
        return not accepts(self.accept, _first_content_type(block))

    def block(self) -> bytes:
        """The last response's header block as received (1xx ones before it dropped)."""
        head = self.head
        return bytes(head[head.rfind(b"\nHTTP/") + 1 :])  # a status line starts the block

    def _head_too_big(self) -> bool:
        """Whether the last header block is over MAX_HEADER_BYTES (then the
        transfer is aborted for it); a few 1xx blocks before it do not count."""
        if len(self.block()) <= MAX_HEADER_BYTES:
            return False
        self.aborted = Specific.HEADERS_TOO_BIG
        return True

    def _open_socket(self, purpose: int, address: tuple) -> _Handover | int:
        family, socktype, protocol, addr = address
        if not self.allow.admits(addr[0]):
            self.aborted = Specific.FORBIDDEN_ADDRESS
            return pycurl.SOCKET_BAD
        return _Handover(socket.socket(family, socktype, protocol))

    def shut_if_desynced(self, in_use: Callable[[int], bool]) -> bool:
        """Shut this transfer's plain HTTP/1.x connection if bytes nobody
        asked for wait on it (see the opening comment); True if it did.
        `in_use(fd)` says whether libcurl already gave the connection to
        another transfer (it reuses a connection the moment a transfer ends,
        before we hear of the end): that transfer's response is no stray."""
        c = self.handle
        if self.url.startswith("https:") or c.getinfo(pycurl.INFO_HTTP_VERSION) not in HTTP1:
            return False  # TLS records and HTTP/2 frames may rightly be pending
        fd = c.getinfo(pycurl.ACTIVESOCKET)
        if fd < 0 or in_use(fd):
            return False  # libcurl closed it already, or it carries the next transfer
        poll = self.poll
        poll.register(fd, select.POLLIN)
        try:
            if not poll.poll(0):
                return False  # nothing waits: the common case, one syscall
        finally:
            poll.unregister(fd)
        sock = socket.socket(fileno=fd)  # borrowed from libcurl: detached below, never closed here
        try:
            if not sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                return False  # only the peer's FIN: libcurl sees that itself
            sock.recv(MAX_STRAY_BYTES, socket.MSG_DONTWAIT)  # dropped, so EOF shows
            sock.shutdown(socket.SHUT_RDWR)
            return True
        except OSError:  # nothing waiting (EAGAIN), or already broken
            return False
        finally:
            sock.detach()

    def result(self, curl_code: int, message: str) -> FetchResult:
        c = self.handle
        http_code = c.getinfo(pycurl.RESPONSE_CODE)
        head = self.block()
        if len(head) > MAX_HEADER_BYTES and self.aborted is None:
            self.aborted = Specific.HEADERS_TOO_BIG  # a response without a body: checked here
        aborted = self.aborted
        if aborted is Specific.HEADERS_TOO_BIG and len(head) > MAX_HEADER_BYTES:
            head = head[: head.rfind(b"\n", 0, MAX_HEADER_BYTES) + 1]  # the whole lines within the bound
        if aborted is Specific.UNWANTED_TYPE:
            how = "HEAD" if self.in_head else "GET aborted at the headers"
            message = f"{how}: type {media_type(_content_type(head)) or '?'} not accepted"
        body = b"".join(self.body)
        if curl_code == pycurl.E_WRITE_ERROR and aborted is None and not self.raw and _CONTENT_ENCODING.search(head):
            # libcurl's gzip, deflate and brotli decoders refuse bytes after the
            # compressed stream's end (a buggy cache's, a second gzip member)
            # once they have delivered the whole stream; browsers show that
            # page and drop the rest (Chrome's gzip source stream ignores extra
            # bytes): the body is complete, not a connection reset
            curl_code, message = pycurl.E_OK, ""
        return FetchResult(
            self.key, self.url, int((time.monotonic() - self.started) * 1000), curl_code, message,
            http_code, http_code > 0 or c.getinfo(pycurl.REQUEST_SIZE) > 0, aborted,
            head, b"" if aborted else body,
            (_content_type(head) or None) if http_code else None,
            partial=body if aborted is Specific.TOO_BIG and self.request.keep_partial else b"",
            request=b"".join(self.sent), ip=c.getinfo(pycurl.PRIMARY_IP) or "",
            truncated=_truncation(aborted, curl_code, bool(head)),
        )  # fmt: skip

    def content_type(self) -> bytes | None:
        """The Content-Type of the last header block, as the bytes received
        (with several, as Fetch reads them: _content_type)."""
        return _content_type(self.block()) or None


def _truncation(aborted: Specific | None, curl_code: int, got_head: bool) -> str:
    """WARC-Truncated's reason for a response whose body was cut, or ''."""
    if not got_head:
        return ""
    if aborted is Specific.TOO_BIG or curl_code == pycurl.E_FILESIZE_EXCEEDED:  # ours, or MAXFILESIZE's
        return "length"
    if curl_code == pycurl.E_PARTIAL_FILE and aborted is None:  # the server closed before the body's end
        return "disconnect"
    return "time" if curl_code == CURL_TIMEOUT and aborted is None else ""


def _content_type(block: bytes) -> bytes | None:
    """The Content-Type of a header block, by Fetch's "extract a MIME type"
    when it holds several (PHP and a proxy each adding one): the last
    value's type, with the charset of an earlier value of the same type when
    the last names none, as a browser reads the page (docs/urls.md)."""
    values = [value.strip() for value in _CONTENT_TYPE.findall(block)]
    if len(values) < 2:
        return values[0] if values else None
    chosen, essence, charset = None, None, None
    for value in values:
        kind = value.partition(b";")[0].strip().lower()
        if b"/" not in kind or kind == b"*/*":
            continue  # Fetch skips a value that fails to parse, and */*
        found = _CHARSET.search(value)
        if kind != essence:
            essence, charset = kind, found.group(1) if found else None
        elif found:
            charset = found.group(1)
        chosen = value
    if chosen is not None and charset is not None and not _CHARSET.search(chosen):
        chosen += b"; charset=" + charset
    return chosen


_CHARSET = re.compile(rb";\s*charset\s*=\s*(\"[^\"]*\"|[^;\s]+)", re.IGNORECASE)
# A header line of a block (never its status line, which opens it) and its
# value: the name with the blanks bytes.strip() would drop around it, in
# ASCII case (as bytes.lower()).
_BLANKS = rb"[ \t\r\v\f]*"
_CONTENT_TYPE = re.compile(rb"\n" + _BLANKS + rb"content-type" + _BLANKS + rb":([^\n]*)", re.IGNORECASE)
_CONTENT_ENCODING = re.compile(rb"\n" + _BLANKS + rb"content-encoding" + _BLANKS + rb":([^\n]*)", re.IGNORECASE)
# The content codings browsers decode (Fetch, "HTTP-network fetch"); a body
# in any other ('utf-8', 'none', 'binary': a server's misconfiguration) a
# browser shows as sent (Chromium passes an unknown coding's body through)
_BROWSER_CODINGS = frozenset({b"gzip", b"x-gzip", b"deflate", b"br", b"zstd", b"identity"})


def _unknown_codings(block: bytes) -> bool:
    """Whether a header block's Content-Encoding names codings, none of
    which a browser decodes (then its body is shown as sent)."""
    codings = {c.strip().lower() for value in _CONTENT_ENCODING.findall(block) for c in value.split(b",")} - {b""}
    return bool(codings) and not codings & _BROWSER_CODINGS


def _first_content_type(block: bytes) -> bytes | None:
    """The first Content-Type value of a header block."""
    found = _CONTENT_TYPE.search(block)
    return None if found is None else found.group(1).strip()


def default_ca_file() -> str | None:
    """The system CA bundle, if OpenSSL knows one (libcurl's own default otherwise)."""
    paths = ssl.get_default_verify_paths()
    for path in (paths.cafile, paths.openssl_cafile):
        if path and os.path.exists(path):
            return path
    return None


class Fetcher:
    """Runs up to any number of transfers; reports each via on_result."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fs: FetchSettings,
                 on_result: Callable[[FetchResult], None]) -> None:  # fmt: skip
        if fs.ca_file is None:
            fs = dataclasses.replace(fs, ca_file=default_ca_file())
        self.settings = fs
        self.allow = AllowNet(fs.allow_net)
        self.on_result = on_result
        self.curl = CurlLoop(loop, self._done, on_failed=self._failed,
                             on_complete=lambda handle: self._slots[handle].shut_if_desynced(self.curl.watching),
                             after_action=self._quieten)
        self._quiet: list[_Slot] = []  # slots whose request went out in this socket_action
        self._free: list[_Slot] = []
        self._busy: dict[Any, _Slot] = {}
        # handle -> its slot: the way back from CurlLoop's callbacks. A pycurl
        # handle's own attribute (handle.slot) costs 0.5 us a read, twice a
        # transfer: pycurl looks it up after its option names.
        self._slots: dict[pycurl.Curl, _Slot] = {}

    @property
    def active(self) -> int:
        return len(self._busy)

    def fetching(self, key: Any) -> bool:
        """Whether the transfer of `key` is under way (started, no result yet)."""
        return key in self._busy

    def start(self, key: Any, url: str, ip: str, request: Request = PLAIN) -> FetchResult | None:
        """Begin fetching; a result at once (no transfer) for a refused address
        or URL, or a record-only request (nofetch=, which connects nowhere)."""
        if request.nofetch is not None:
            return FetchResult(key, url, 0, aborted=nf.specific(request.nofetch), message=request.nofetch.why,
                               nofetch=request.nofetch.why, refused=request.nofetch.refused)
        if not url.startswith(("http://", "https://")):
            return FetchResult(key, url, 0, aborted=Specific.BAD_URL, message="only http and https are fetched")
        if not self.allow.admits(ip):
            return FetchResult(key, url, 0, aborted=Specific.FORBIDDEN_ADDRESS,
                               message=self.allow.refusal(ip) or f"address {ip} is not admitted")
        slot = self._free.pop() if self._free else self._new_slot()
        try:
            slot.begin(key, url, ip, request)
        except pycurl.error as exc:
            self._free.append(slot)
            return FetchResult(key, url, 0, aborted=Specific.BAD_URL, message=str(exc))
        self._busy[key] = slot
        self.curl.add(slot.handle)
        return None

    def _new_slot(self) -> _Slot:
        slot = _Slot(self.settings, self.allow, self._quiet)
        self._slots[slot.handle] = slot
        return slot

    def serve_ready(self) -> None:
        """Let transfers that are ready progress now (CurlLoop.serve_ready)."""
        self.curl.serve_ready()

    def _quieten(self) -> None:
        """VERBOSE off for the slots whose request just went out (the top)."""
        if self._quiet:
            for slot in self._quiet:
                slot.quieten()
            self._quiet.clear()

    def cancel(self, key: Any) -> bool:
        slot = self._busy.pop(key, None)
        if slot is None:
            return False
        self.curl.remove(slot.handle)
        self._release(slot)
        return True

    def close(self) -> None:
        for key in list(self._busy):
            self.cancel(key)
        self.curl.close()
        for slot in self._free:
            slot.handle.close()
        self._free.clear()
        self._slots.clear()

    def _done(self, handle: pycurl.Curl, curl_code: int, message: str) -> None:
        slot = self._slots[handle]
        if slot.in_head:
            verdict = self._after_head(slot, curl_code)
            if verdict is not None:  # the GET follows, on the same slot
                slot.again_as_get(verdict)
                self.curl.add(handle)
                return
        again = ""
        if curl_code == pycurl.E_BAD_CONTENT_ENCODING and not slot.raw and _unknown_codings(slot.block()):
            if not (self.settings.raw_again and _asked_again_later(slot.request)):  # see the opening comment
                slot.again_raw()  # as a browser shows it: the body as sent, asked again at once
                self.curl.add(handle)
                return
            again = "raw"  # the urlserver asks again, after the host's delay (the opening comment)
        result = slot.result(curl_code, message)
        result.again = again
        if result.http_code in REDIRECT_CODES and self.settings.cookies and (cookie := slot.cookie_check(result)):
            slot.again_with_cookie(cookie)  # as a browser does (the opening comment)
            self.curl.add(handle)
            return
        if slot.head_type is not None:
            result.head_unusable = _head_verdict(slot.head_type, result)
        del self._busy[slot.key]  # only now: if the above raised, _failed reports it
        self._release(slot)
        self.on_result(result)

    def _failed(self, handle: pycurl.Curl, exc: Exception) -> None:
        """Ending this transfer raised: report it alone, as INTERNAL with a reason."""
        slot = self._slots[handle]
        if self._busy.get(slot.key) is not slot:
            return  # it was reported before the failure
        del self._busy[slot.key]
        ms = int((time.monotonic() - slot.started) * 1000)
        result = FetchResult(slot.key, slot.url, ms, aborted=Specific.INTERNAL,
                             message=f"spider error while ending the transfer: {exc!r}"[:200])
        self._release(slot)
        self.on_result(result)

    def _after_head(self, slot: _Slot, curl_code: int) -> str | None:
        """None when the HEAD settles the transaction (a 2xx of an unwanted
        type); else why the GET must follow: '' (the HEAD was fine) or why
        this host's HEAD is unusable."""
        c = slot.handle
        code = c.getinfo(pycurl.RESPONSE_CODE)
        if curl_code != pycurl.E_OK or code == 0:
            return "HEAD failed"
        if code in (405, 501):
            return f"HEAD answered {code}"
        if 200 <= code < 300 and not accepts(slot.accept, slot.content_type()):
            slot.aborted = Specific.UNWANTED_TYPE  # settled: no GET
            return None
        if code in REDIRECT_CODES and (target := c.getinfo_raw(pycurl.REDIRECT_URL)):
            if self.settings.cookies and names_itself(target, slot.url) and retry_cookie(slot.url, slot.block()):
                return ""  # a cookie check (docs/protocol.txt 5.3.2): the GET follows and makes it
            return None  # settled: the redirect is reported (a GET would get the same Location)
        return ""

    def _release(self, slot: _Slot) -> None:
        if slot.raw:
            slot.handle.setopt(pycurl.HTTP_CONTENT_DECODING, 1)
            slot.raw = False
        if slot.cookie:  # the next transfer's headers are its request's, without the cookie
            slot.handle.setopt(pycurl.HTTPHEADER, slot.request.headers())
            slot.cookie = False
        if slot.request.head:  # the next transfer starts as a GET, on a reusable connection
            slot.handle.setopt(pycurl.HTTPGET, 1)
            slot.handle.setopt(pycurl.FORBID_REUSE, 0)
        slot.body = []
        slot.head.clear()
        self._free.append(slot)


def _asked_again_later(request: Request) -> bool:
    """Whether a page in codings no browser knows is reported with again=raw
    (the urlserver hands it out again with raw=1 after the host's delay)
    rather than asked again at once: a plain page fetch, not the urlserver's
    own (robots.txt, feeds, sitemaps: body=, kind=) nor a recrawl's
    conditional GET, whose assignments raw=1 does not reach."""
    return request.filter_type and request.etag is None and request.last_modified is None


def _head_verdict(head: tuple[str, str], result: FetchResult) -> str:
    """Why the host's HEAD is unusable, from the HEAD's type and verdict and the GET."""
    head_type, verdict = head
    if verdict:
        return verdict
    got = media_type(_first_content_type(result.head))
    if 200 <= result.http_code < 300 and head_type and got and got != head_type:
        return f"HEAD said {head_type}, GET sent {got}"
    return ""
