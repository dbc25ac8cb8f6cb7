# A small HTTP/1.1 server on asyncio for an operator's port (the
# urlserver's --http): h11 (sans-I/O) parses and frames, this module owns
# the sockets, the bounds, routing and the API token; the daemon owns what
# each route answers. Per connection:
#   - at most MAX_CONNECTIONS at once: one beyond it is answered 503 at once,
#     unread, and holds no descriptor (an operator's browser and a scraper or
#     two never need more; a flood never starves the daemon's other sockets);
#   - the request head is bounded (MAX_HEAD, by h11) and so is the body
#     (max_body: a Content-Length above it is refused with 413 before any of
#     the body is read); the whole request must arrive within READ_TIMEOUT_S,
#     one deadline for all its reads, so a slow drip cannot hold a slot;
#   - keep-alive as HTTP/1.1 says, each next request under the same
#     deadline; an idle connection is closed after READ_TIMEOUT_S.
# A route is (method, path pattern, handler, access): the pattern's {name}
# parts match one path segment each and are handed to the handler
# (percent-decoded). Access is "open" (anyone who reaches the port), "read"
# or "write": a TokenGate decides (docs/api.md, "Authentication"). Every
# error answer is one JSON object {"error": "one line"}; handlers raise
# HttpError for a 4xx with what was wrong.
"""HttpServer, Route, Request, Response, HttpError and TokenGate."""

from __future__ import annotations

import asyncio
import hmac
import http
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

import h11
import msgspec

from wreck.cannotlisten import listening
from wreck.listener import peer_host
from wreck.loglimit import LogLimiter
from wreck.protocol.settings import split_host_port

# An operator's browser, a Prometheus scraper or two and a script: 32 at once
# is plenty; beyond it a request gets 503 at once and holds no descriptor.
MAX_CONNECTIONS = 32
MAX_HEAD = 8192  # request line and headers: a longer head is answered 431
DEFAULT_MAX_BODY = 1024 * 1024  # a JSON body: 10,000 seed URLs of 100 bytes fit
READ_TIMEOUT_S = 5.0  # one request, head and body, from its first byte (and an idle keep-alive)
READ_CHUNK = 65536

OPEN, READ, WRITE = "open", "read", "write"  # a route's access (TokenGate)


class HttpError(Exception):
    """An answer other than 2xx, with a one-line reason for the client."""

    def __init__(self, status: int, message: str, *, headers: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


@dataclass
class Request:
    """One parsed request: method, path (percent-encoded, as sent), query, lowercased headers, body."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    peer: str  # the client's address, without its port
    params: dict[str, str] = field(default_factory=dict)  # the route pattern's {name} parts

    def arg(self, name: str, default: str | None = None) -> str | None:
        """One query parameter's first value."""
        values = self.query.get(name)
        return values[0] if values else default

    def json(self) -> object:
        """The body as JSON; HttpError 400 (or 415) if it is not."""
        ctype = self.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if ctype not in ("application/json", "application/x-www-form-urlencoded", ""):
            raise HttpError(415, f"the body must be JSON (Content-Type: application/json), not {ctype}")
        if not self.body:
            raise HttpError(400, "a JSON body is required")
        try:
            return msgspec.json.decode(self.body)
        except msgspec.DecodeError as exc:
            raise HttpError(400, f"the body is not valid JSON: {exc}") from None


@dataclass
class Response:
    """What a handler answers."""

    status: int
    content_type: str
    body: bytes

    @classmethod
    def json(cls, value: object, status: int = 200) -> Response:
        return cls(status, "application/json", msgspec.json.encode(value) + b"\n")


def error_response(status: int, message: str) -> Response:
    """The one error format: {"error": "..."} on one line."""
    return Response.json({"error": message.replace("\n", " ")}, status)


@dataclass(frozen=True)
class Route:
    """METHOD and a path pattern ('/api/hosts/{host}/pause'), its handler and access."""

    method: str
    pattern: str
    handler: Callable[[Request], Response]
    access: str = OPEN

    def match(self, path: str) -> dict[str, str] | None:
        found = _compiled(self.pattern).fullmatch(path)
        return None if found is None else {k: unquote(v) for k, v in found.groupdict().items()}


_PATTERNS: dict[str, re.Pattern] = {}


def _compiled(pattern: str) -> re.Pattern:
    regex = _PATTERNS.get(pattern)
    if regex is None:
        regex = _PATTERNS[pattern] = re.compile(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(pattern)))
    return regex


class TokenGate:
    """Who may use a route: `token` is the API token (None: none configured).

    OPEN routes need nothing. READ routes need the token when the port
    listens beyond loopback; WRITE routes need it whenever a token is
    configured (and one always is beyond loopback: check_exposure).
    """

    def __init__(self, token: str | None, *, exposed: bool) -> None:
        self.token = token.encode() if token else None
        self.exposed = exposed

    def refusal(self, access: str, headers: dict[str, str]) -> str | None:
        """Why a request with these headers may not use a route of `access`, or None."""
        if access == OPEN or (access == READ and not self.exposed) or self.token is None:
            return None
        given = headers.get("authorization", "")
        scheme, _, credentials = given.partition(" ")
        if not given:
            return "this endpoint needs 'Authorization: Bearer TOKEN' (docs/api.md, Authentication)"
        if scheme.lower() != "bearer" or not hmac.compare_digest(credentials.strip().encode(), self.token):
            return "wrong API token"
        return None


class HttpServer:
    """The listener: routes requests to handlers under the bounds at the top."""

    def __init__(self, routes: list[Route], *, gate: TokenGate, log: logging.Logger,
                 max_body: int = DEFAULT_MAX_BODY, max_connections: int = MAX_CONNECTIONS) -> None:
        self.routes = routes
        self.gate = gate
        self.log = log
        self.max_body = max_body
        self.max_connections = max_connections
        self.active = 0  # connections open now
        self.refused = LogLimiter(log)  # 401s, per client address
        self._server: asyncio.base_events.Server | None = None

    async def start(self, address: str) -> tuple[str, int]:
        """Listen on HOST:PORT; the bound (host, port)."""
        host, port = split_host_port(address, listen=True)
        with listening("--http", host, port):
            self._server = await asyncio.start_server(self._handle, host, port, reuse_address=True, limit=READ_CHUNK)
        bound = self._server.sockets[0].getsockname()[:2]
        self.log.info("event=http_listening address=%s:%d", *bound)
        return bound

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()

    # -- one request -------------------------------------------------------------

    def answer(self, request: Request) -> Response:
        """Route `request` and run its handler (errors become the JSON error format)."""
        allowed = []
        for route in self.routes:
            params = route.match(request.path)
            if params is None:
                continue
            if route.method != request.method and not (route.method == "GET" and request.method == "HEAD"):
                allowed.append(route.method)
                continue
            refusal = self.gate.refusal(route.access, request.headers)
            if refusal is not None:
                self.refused.warn(request.peer, "event=api_refused peer=%s method=%s path=%s reason=%r",
                                  request.peer, request.method, request.path[:200], refusal)
                return error_response(401, refusal)
            request.params = params
            try:
                return route.handler(request)
            except HttpError as exc:
                return error_response(exc.status, str(exc))
        if allowed:
            return error_response(405, f"{request.method} is not allowed on {request.path}: use {', '.join(allowed)}")
        return error_response(404, f"no such endpoint: {request.path}")

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.active >= self.max_connections:
            writer.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            writer.close()  # unread: nothing of it is kept
            return
        self.active += 1
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        peer = peer_host(writer.get_extra_info("peername"))
        try:
            while True:
                try:
                    async with asyncio.timeout(READ_TIMEOUT_S):
                        request = await self._read_request(conn, reader, peer)
                except HttpError as exc:
                    if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                        await self._send(conn, writer, "GET", error_response(exc.status, str(exc)), close=True)
                    return
                if request is None:
                    return  # the client closed, or went idle
                response = self.answer(request)
                await self._send(conn, writer, request.method, response)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return  # Connection: close (HTTP/1.0, or asked), or a body left unread
                conn.start_next_cycle()
        except (TimeoutError, ConnectionError, h11.LocalProtocolError):
            pass
        finally:
            self.active -= 1
            writer.close()

    async def _read_request(self, conn: h11.Connection, reader: asyncio.StreamReader, peer: str) -> Request | None:
        """The next whole request, None at a clean end; HttpError when it cannot be served."""
        head = None
        body = bytearray()
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:
                raise HttpError(exc.error_status_hint, f"bad request: {exc}") from None
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(READ_CHUNK))  # b"" at EOF: h11 says ConnectionClosed
                continue
            if isinstance(event, h11.ConnectionClosed):
                return None
            if isinstance(event, h11.Request):
                head = event
                # h11 bounds a head still arriving; one that came whole in one read is measured here
                if len(event.target) + sum(len(k) + len(v) + 4 for k, v in event.headers) > MAX_HEAD:
                    raise HttpError(431, f"the request head is over {MAX_HEAD} bytes")
                length = dict(event.headers).get(b"content-length")
                if length is not None and int(length) > self.max_body:
                    raise HttpError(413, f"the body is {int(length)} bytes; at most {self.max_body} are read")
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > self.max_body:
                    raise HttpError(413, f"the body is over {self.max_body} bytes")
            elif isinstance(event, h11.EndOfMessage):
                parts = urlsplit(head.target.decode("latin-1"))
                headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in head.headers}
                return Request(head.method.decode("ascii", "replace"), parts.path or "/", parse_qs(parts.query),
                               headers, bytes(body), peer)

    async def _send(self, conn: h11.Connection, writer: asyncio.StreamWriter, method: str, response: Response,
                    *, close: bool = False) -> None:
        headers = [("Content-Type", response.content_type), ("Content-Length", str(len(response.body))),
                   ("Cache-Control", "no-store")]
        if close:
            headers.append(("Connection", "close"))
        phrase = http.HTTPStatus(response.status).phrase.encode() if response.status in _KNOWN else b""
        data = conn.send(h11.Response(status_code=response.status, headers=headers, reason=phrase))
        if method != "HEAD" and response.body:
            data += conn.send(h11.Data(data=response.body))
        data += conn.send(h11.EndOfMessage())
        writer.write(data)
        await writer.drain()


_KNOWN = frozenset(s.value for s in http.HTTPStatus)
