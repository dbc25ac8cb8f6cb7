# The test web's HTTP server: one asyncio listener per address, one port number.
#
# TestWeb.start() binds the same port on every address the site uses (letting
# the OS pick the first, retrying the set on a collision), generates the site
# for that port, and serves raw-stream connections: read a request head
# (wire.py), route by Host header to an ordinary host (pages.py) or the hostile
# one (hostile.py), write, repeat while keep-alive holds.  A request for a host
# on the wrong address gets 421, so a crawler's DNS mistakes show.  Every
# exchange ends in one RequestRecord, whatever happened.  RunningWeb runs a
# TestWeb (and its DNS responder) on a private event loop in a thread.

from __future__ import annotations

import asyncio
import errno
import gzip
import html
import logging
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from . import pages
from .dns import LISTEN_IP as DNS_LISTEN_IP, DnsResponder
from .hostile import HostileHost
from .names import write_hosts_file
from .reqlog import RequestLog, RequestRecord
from .edges import EdgesHost
from .edges2 import Edges2Host
from .cookies import CookieHosts
from .edges3 import Edges3Host
from .edges4 import Edges4Host
from .crawltraps import TrapHosts
from .intl import INTL_IP, IntlHost
from .revisit import RevisitHosts
from .site import Site, build_site
from .spec import HOSTILE_NAME, SiteSpec
from .wire import (MAX_HEAD_BYTES, BadRequest, Conn, Request, is_not_modified, read_request,
                   send_response)

LOG = logging.getLogger(__name__)
BIND_ATTEMPTS = 20
"""Tries at finding one port free on every address before giving up."""
LISTEN_BACKLOG = 512
"""Crawlers open many connections at once; don't let SYNs drop."""
GZIP_MIN_BYTES = 256
"""Smaller bodies are sent as is, like most servers do."""
START_TIMEOUT = 30.0
"""Seconds RunningWeb waits for the server thread to start or stop."""


class TestWeb:
    """The whole local web: HTTP on every site address plus an optional DNS responder."""

    __test__ = False  # not a pytest test class

    def __init__(self, spec: SiteSpec = SiteSpec(), *, log_path: str | Path | None = None,
                 dns: bool = True, dns_ttl: int = 60, dns_ip: str = DNS_LISTEN_IP,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.spec = spec
        self.log = RequestLog(log_path)
        self.dns: DnsResponder | None = None
        self._want_dns, self._dns_ttl, self._dns_ip, self._clock = dns, dns_ttl, dns_ip, clock
        self._servers: list[asyncio.Server] = []
        self._conns: set[asyncio.Task] = set()
        self._stopping = False
        self._gzipped: dict[tuple[str, str], bytes] = {}
        self.site: Site | None = None
        self.hostile: HostileHost | None = None
        self.hostiles: dict[str, HostileHost] = {}
        """Every hostile host by name; self.hostile is evil.wreck.test's."""
        self.revisit: RevisitHosts | None = None
        self.intl: IntlHost | None = None
        self.edges: EdgesHost | None = None
        self.edges2: Edges2Host | None = None
        self.edges3: Edges3Host | None = None
        self.edges4: Edges4Host | None = None
        self.cookies: CookieHosts | None = None
        self.traps: TrapHosts | None = None

    @property
    def port(self) -> int:
        if self.site is None:
            raise RuntimeError("TestWeb is not started")
        return self.site.port

    def ips(self) -> list[str]:
        """Every address served (known before start)."""
        ips = {self.spec.host_ip(i) for i in range(self.spec.hosts)}
        ips |= {self.spec.hostile_ip} if self.spec.hostile else set()
        ips |= {INTL_IP} if self.spec.intl else set()
        ips |= set(EdgesHost.addresses().values()) if self.spec.edges else set()
        ips |= set(Edges2Host.addresses().values()) if self.spec.edges2 else set()
        ips |= set(Edges3Host.addresses().values()) if self.spec.edges3 else set()
        ips |= set(Edges4Host.addresses().values()) if self.spec.edges4 else set()
        ips |= set(CookieHosts.addresses().values()) if self.spec.cookies else set()
        ips |= TrapHosts.ips() if self.spec.crawltraps else set()
        return sorted(ips | ({self.spec.revisit.ip} if self.spec.revisit else set()))

    async def start(self) -> None:
        """Bind, generate the site, start serving (and the DNS responder)."""
        socks, port = bind_all(self.ips(), self.spec.port)
        self.site = build_site(self.spec, port)
        self.hostiles = {name: HostileHost(self.spec.hostile_spec, port=port, seed=self.spec.seed,
                                           clock=self._clock, name=name)
                         for name in self.spec.hostile_names()}
        self.hostile = self.hostiles.get(HOSTILE_NAME)
        if self.spec.revisit is not None:
            self.revisit = RevisitHosts(self.spec.revisit)
        if self.spec.intl:
            self.intl = IntlHost()
        if self.spec.edges:
            self.edges = EdgesHost(port)
        if self.spec.edges2:
            self.edges2 = Edges2Host(port)
        if self.spec.edges3:
            self.edges3 = Edges3Host(port)
        if self.spec.edges4:
            self.edges4 = Edges4Host(port)
        if self.spec.cookies:
            self.cookies = CookieHosts(port)
        if self.spec.crawltraps:
            self.traps = TrapHosts(port)
        for sock in socks:
            self._servers.append(await asyncio.start_server(self._serve, sock=sock,
                                                            limit=MAX_HEAD_BYTES))
        if self._want_dns:
            self.dns = DnsResponder(self.site.addresses(), ttl=self._dns_ttl, ip=self._dns_ip)
            await self.dns.start()

    async def stop(self) -> None:
        """Stop listening, cut every open connection, close the log."""
        self._stopping = True
        for server in self._servers:
            server.close()
        for task in list(self._conns):
            task.cancel()
        await asyncio.gather(*self._conns, return_exceptions=True)
        await asyncio.sleep(0)  # let the aborted transports run connection_lost
        for server in self._servers:
            await server.wait_closed()
        self._servers.clear()
        if self.dns:
            await self.dns.stop()
        self.log.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._conns.add(task)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = Conn(reader, writer)
        try:
            while True:
                try:
                    async with asyncio.timeout(self.spec.keepalive_timeout):
                        request = await read_request(reader)
                except BadRequest as exc:
                    await self._exchange(conn, None, exc)
                    break
                if request is None or not await self._exchange(conn, request, None):
                    break
        except (TimeoutError, ConnectionError):
            pass
        except asyncio.CancelledError:
            if not self._stopping:
                raise
            # stop() cancelled us: end quietly (asyncio's stream callback would
            # otherwise report the cancelled task as an error)
        finally:
            self._conns.discard(task)
            if self._stopping:
                writer.transport.abort()  # don't wait to flush to a peer that may never read
            else:
                writer.close()

    async def _exchange(self, conn: Conn, request: Request | None, bad: BadRequest | None) -> bool:
        wall, mono = time.time(), time.monotonic()
        conn.bytes_sent, conn.status, keep, completed = 0, 0, False, False
        try:
            if request is None:
                body = f"<html><body>{html.escape(str(bad))}</body></html>".encode()
                await conn.send_head(bad.status, [("Content-Length", str(len(body))),
                                                  ("Connection", "close")])
                await conn.send(body)
            else:
                keep = await self._dispatch(conn, request)
            completed = True
        except ConnectionError:
            pass
        except Exception as exc:  # a handler bug must not kill the server
            LOG.exception("test web handler failed on %s", request)
            if conn.bytes_sent == 0 and request is not None:
                await send_response(conn, request, 500, [("Content-Type", "text/plain")],
                                    f"test web handler failed: {exc!r}".encode(), keep_alive=False)
        finally:
            self.log.append(_record(conn, request, wall, mono, completed))
        return keep

    async def _dispatch(self, conn: Conn, req: Request) -> bool:
        local_ip = conn.writer.get_extra_info("sockname")[0]
        if req.method not in ("GET", "HEAD"):
            return await send_response(conn, req, 405, [("Allow", "GET, HEAD")], b"")
        if hostile := self.hostiles.get(req.host):
            if local_ip != self.spec.hostile_ip:
                return await _misdirected(conn, req)
            return await hostile.handle(req, conn)
        if self.revisit is not None and req.host in self.revisit.addresses():
            if local_ip != self.spec.revisit.ip:
                return await _misdirected(conn, req)
            return await self.revisit.handle(req, conn)
        if self.intl is not None and req.host in self.intl.addresses():
            if local_ip != INTL_IP:
                return await _misdirected(conn, req)
            return await self.intl.handle(req, conn)
        if self.edges is not None and req.host in self.edges.addresses():
            if local_ip != self.edges.addresses()[req.host]:
                return await _misdirected(conn, req)
            return await self.edges.handle(req, conn)
        for module in (self.edges2, self.edges3, self.edges4, self.cookies, self.traps):  # the modules that name each host's address
            if module is not None and (address := module.address_of(req.host)) is not None:
                if local_ip != address:
                    return await _misdirected(conn, req)
                return await module.handle(req, conn)
        host = self.site.hosts.get(req.host)
        if host is None:
            return await send_response(conn, req, 404, [("Content-Type", "text/plain")],
                                       f"no site named {req.host!r} here\n".encode())
        if host.ip != local_ip:
            return await _misdirected(conn, req)
        res = pages.resolve(host, req.path)
        headers = list(res.headers)
        if res.status == 200 and is_not_modified(req, res.etag, res.last_modified):
            validators = [h for h in headers if h[0] != "Content-Type"]
            return await send_response(conn, req, 304, validators)
        body = res.body
        ctype = dict(res.headers).get("Content-Type", "")
        if len(body) >= GZIP_MIN_BYTES and ctype.startswith("text/"):
            headers.append(("Vary", "Accept-Encoding"))
            if _accepts_gzip(req.headers.get("accept-encoding", "")):
                key = (host.name, req.path)
                if key not in self._gzipped:
                    self._gzipped[key] = gzip.compress(body, compresslevel=6, mtime=0)
                body = self._gzipped[key]
                headers.append(("Content-Encoding", "gzip"))
        return await send_response(conn, req, res.status, headers, body)


class RunningWeb:
    """A TestWeb on its own event loop in a background thread; a context manager.

    with RunningWeb(SiteSpec(hosts=3)) as web:
        web.site.seed_urls(); web.log.records(); web.dns_address
    """

    def __init__(self, spec: SiteSpec = SiteSpec(), *, start_timeout: float = START_TIMEOUT,
                 **options) -> None:
        self.web = TestWeb(spec, **options)
        self._start_timeout = start_timeout  # a 100,000-page site takes longer to generate
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="wreck-testweb",
                                        daemon=True)

    def __enter__(self) -> RunningWeb:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.web.start(), self._loop).result(self._start_timeout)
        return self

    def __exit__(self, *exc_info) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self.web.stop(), self._loop).result(START_TIMEOUT)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(START_TIMEOUT)
            self._loop.close()

    @property
    def site(self) -> Site:
        return self.web.site

    @property
    def port(self) -> int:
        return self.web.port

    @property
    def log(self) -> RequestLog:
        return self.web.log

    @property
    def dns(self) -> DnsResponder | None:
        return self.web.dns

    @property
    def dns_address(self) -> tuple[str, int] | None:
        """(ip, port) of the DNS responder, when it runs."""
        return self.web.dns.address if self.web.dns else None

    def url(self, host: str, path: str = "/") -> str:
        return self.site.url(host, path)

    def write_hosts_file(self, path: str | Path) -> Path:
        """Write /etc/hosts-style lines for every served name; return the path."""
        return write_hosts_file(self.site.addresses(), path)


def bind_all(ips: list[str], port: int = 0) -> tuple[list[socket.socket], int]:
    """Listening sockets on `port` at every address in `ips`; port 0 picks one free on all."""
    for _ in range(BIND_ATTEMPTS):
        socks: list[socket.socket] = []
        chosen = port
        try:
            for ip in ips:
                # protocol 6 explicitly: asyncio then also sets TCP_NODELAY itself
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
                socks.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((ip, chosen))
                chosen = sock.getsockname()[1]
                sock.listen(LISTEN_BACKLOG)
                sock.setblocking(False)
            return socks, chosen
        except OSError as exc:
            for sock in socks:
                sock.close()
            if exc.errno != errno.EADDRINUSE or port:
                raise
    raise OSError(errno.EADDRINUSE, f"no port free on all of {len(ips)} addresses")


async def _misdirected(conn: Conn, req: Request) -> bool:
    return await send_response(conn, req, 421, [("Content-Type", "text/plain")],
                               f"{req.host} is not served on this address\n".encode())


def _accepts_gzip(value: str) -> bool:
    for item in value.lower().split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip() in ("gzip", "x-gzip", "*"):
            q = params.strip().removeprefix("q=")
            return not (params and q.replace(".", "").strip("0") == "")
    return False


def _record(conn: Conn, req: Request | None, wall: float, mono: float,
            completed: bool) -> RequestRecord:
    peer = conn.writer.get_extra_info("peername") or ("", 0)
    local = conn.writer.get_extra_info("sockname") or ("", 0)
    headers = req.headers if req else {}
    return RequestRecord(
        wall_time=wall, mono_time=mono, duration=time.monotonic() - mono,
        client_ip=peer[0], client_port=peer[1], server_ip=local[0], server_port=local[1],
        host=req.host if req else "", method=req.method if req else "-",
        target=req.path if req else "", user_agent=headers.get("user-agent"),
        if_none_match=headers.get("if-none-match"),
        if_modified_since=headers.get("if-modified-since"),
        accept_encoding=headers.get("accept-encoding"),
        status=conn.status, bytes_sent=conn.bytes_sent, completed=completed)
