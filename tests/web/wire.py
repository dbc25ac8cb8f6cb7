# HTTP/1.1 by hand: reading one request head, writing response heads.
#
# Written by hand (no http library) because the hostile host must be able to
# send anything at all.  read_request() reads up to the blank line with a bounded
# StreamReader (the server's `limit`), so a client can never make it buffer more
# than MAX_HEAD_BYTES; any violation raises BadRequest and the server answers 400.
# Conn wraps the writer, counts bytes sent and remembers the status, which the
# request log records when the exchange ends.

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import socket
import struct

MAX_HEAD_BYTES = 64 * 1024
"""Longest request head accepted: generous for crawlers, bounded against abuse."""
MAX_REQUEST_BODY = 64 * 1024
"""GET/HEAD bodies are read and discarded up to this size; beyond it: 413."""
REASONS = {
    200: "OK", 204: "No Content", 301: "Moved Permanently", 302: "Found", 303: "See Other",
    304: "Not Modified", 307: "Temporary Redirect", 308: "Permanent Redirect",
    400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
    410: "Gone", 413: "Content Too Large", 421: "Misdirected Request", 429: "Too Many Requests",
    431: "Request Header Fields Too Large", 500: "Internal Server Error",
    501: "Not Implemented", 503: "Service Unavailable",
}


class BadRequest(Exception):
    """The peer sent bytes that are not an acceptable HTTP/1.x request."""

    def __init__(self, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.status = status


@dataclasses.dataclass(frozen=True)
class Request:
    """A parsed request head.  Header names are lower-cased."""

    method: str
    target: str
    version: str
    headers: dict[str, str]

    @property
    def host(self) -> str:
        """Host header (or absolute-form target host) without port or final dot."""
        host = self.headers.get("host", "")
        if self.target.startswith(("http://", "https://")):
            host = self.target.split("/", 3)[2]
        if host.startswith("["):
            return host.split("]")[0][1:].lower()
        return host.rsplit(":", 1)[0].rstrip(".").lower() if host else ""

    @property
    def path(self) -> str:
        """Path + query, whatever form the target took."""
        if self.target.startswith(("http://", "https://")):
            rest = self.target.split("/", 3)
            return "/" + (rest[3] if len(rest) > 3 else "")
        return self.target

    @property
    def keep_alive(self) -> bool:
        tokens = {t.strip().lower() for t in self.headers.get("connection", "").split(",")}
        if self.version == "HTTP/1.0":
            return "keep-alive" in tokens
        return "close" not in tokens


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """Read one request head (and discard its body).  None on clean EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise BadRequest("connection closed inside the request head") from None
    except asyncio.LimitOverrunError:
        raise BadRequest("request head too large", 431) from None
    lines = head[:-4].decode("latin-1").split("\r\n")
    while lines and not lines[0]:
        lines.pop(0)  # RFC 9112 2.2: ignore empty lines before the request line
    if not lines:
        raise BadRequest("empty request")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[2].startswith("HTTP/1."):
        raise BadRequest(f"malformed request line {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or line[0] in " \t":
            raise BadRequest(f"malformed header line {line[:80]!r}")
        key = name.lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    if not parts[1].startswith(("/", "http://", "https://")):
        raise BadRequest(f"unsupported request target {parts[1][:80]!r}")
    request = Request(parts[0], parts[1], parts[2], headers)
    if request.version == "HTTP/1.1" and "host" not in headers:
        raise BadRequest("HTTP/1.1 request without Host")
    if "transfer-encoding" in headers:
        raise BadRequest("request bodies with Transfer-Encoding are not supported", 501)
    length = headers.get("content-length", "0")
    if not length.isdigit():
        raise BadRequest("bad Content-Length")
    if int(length) > MAX_REQUEST_BODY:
        raise BadRequest("request body too large", 413)
    if int(length):
        try:
            await reader.readexactly(int(length))
        except asyncio.IncompleteReadError:
            raise BadRequest("connection closed inside the request body") from None
    return request


def response_head(status: int, headers: list[tuple[str, str]] | tuple[tuple[str, str], ...],
                  reason: str | None = None) -> bytes:
    """Status line plus header lines plus the blank line."""
    lines = [f"HTTP/1.1 {status} {reason or REASONS.get(status, 'Unknown')}"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class Conn:
    """One accepted connection's write side, with byte and status accounting."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.bytes_sent = 0
        self.status = 0

    async def send(self, data: bytes) -> None:
        """Write and wait for the buffer to drain (ConnectionError if the peer left)."""
        self.writer.write(data)
        self.bytes_sent += len(data)
        await self.writer.drain()

    async def send_head(self, status: int, headers, reason: str | None = None) -> None:
        self.status = status
        await self.send(response_head(status, headers, reason))

    async def wait_for_peer_close(self, limit: float) -> None:
        """Hold the connection, reading and discarding, until EOF or `limit` seconds."""
        try:
            async with asyncio.timeout(limit):
                while await self.reader.read(4096):
                    pass
        except (TimeoutError, ConnectionError):
            pass

    async def flushed(self) -> None:
        """Wait until the transport's buffer is empty (bytes handed to the kernel)."""
        transport = self.writer.transport
        while transport.get_write_buffer_size() and not transport.is_closing():
            await asyncio.sleep(0.001)

    def reset(self) -> None:
        """Abort with a TCP RST (SO_LINGER 0) instead of an orderly FIN."""
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()


async def send_response(conn: Conn, request: Request, status: int,
                        headers: list[tuple[str, str]] | tuple[tuple[str, str], ...],
                        body: bytes = b"", *, keep_alive: bool = True) -> bool:
    """Send a complete, well-formed response; return whether to keep the connection."""
    keep = keep_alive and request.keep_alive
    no_body = request.method == "HEAD" or status in (204, 304)
    full = list(headers)
    if status not in (204, 304):
        full.append(("Content-Length", str(len(body))))
    full.append(("Connection", "keep-alive" if keep else "close"))
    await conn.send_head(status, full)
    if not no_body and body:
        await conn.send(body)
    return keep


def is_not_modified(request: Request, etag: str | None, last_modified: float | None) -> bool:
    """RFC 9110 13.1: If-None-Match (weak comparison) first, else If-Modified-Since."""
    inm = request.headers.get("if-none-match")
    if inm is not None:
        if etag is None:
            return False
        tags = {t.strip().removeprefix("W/") for t in inm.split(",")}
        return "*" in tags or etag.removeprefix("W/") in tags
    ims = request.headers.get("if-modified-since")
    if ims and last_modified is not None:
        try:
            since = email.utils.parsedate_to_datetime(ims).timestamp()
        except (TypeError, ValueError):
            return False
        return int(last_modified) <= since
    return False
