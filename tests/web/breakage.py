# Broken and abusive transfers of the hostile host: slow, endless, huge, malformed.
#
# Each handler gets the parsed request and the Conn, writes whatever bytes it
# wants, and returns whether the connection may serve another request (almost
# always False: after a broken response the stream is unusable).  Holding
# handlers wait on the peer (read until EOF) bounded by HostileSpec.stall_seconds;
# the server cancels them when it stops.  Query parameters tune some of them per
# request (bounded by MAX_QUERY_*) so tests can ask for a short drip.

from __future__ import annotations

import asyncio
import struct
import urllib.parse
import zlib

from .spec import HostileSpec
from .wire import Conn, Request, send_response

STREAM_CHUNK = 64 * 1024
"""Write size for the streaming endpoints: large enough to be fast on loopback."""
BOMB_CHUNK = 1024 * 1024
"""Zeros compressed per deflate block; after a full flush every block is identical,
so the blob is built by repetition instead of compressing 1 GiB."""
MAX_QUERY_BYTES = 10**9
MAX_QUERY_INTERVAL = 60.0
RESET_ANNOUNCED = 100_000
"""Content-Length /reset-mid-body promises before it resets the connection."""
SPLIT_PAUSE = 0.02
"""Seconds /length-mismatch waits between its head and its (too long) body."""
HEADERS_THEN_CLOSE_LENGTH = 5000
"""Content-Length /headers-then-close promises; it sends 100 bytes then FIN."""


class Breakage:
    """Handlers for the hostile host's broken-transfer paths."""

    def __init__(self, spec: HostileSpec) -> None:
        self.spec = spec
        self._bomb: bytes | None = None

    def routes(self):
        """Exact path -> handler."""
        return {
            "/slow-drip": self.slow_drip,
            "/stall-after-headers": self.stall_after_headers,
            "/no-answer": self.no_answer,
            "/close-without-response": self.close_without_response,
            "/headers-then-close": self.headers_then_close,
            "/big": self.big,
            "/big-chunked": self.big_chunked,
            "/gzip-bomb": self.gzip_bomb,
            "/bad-gzip": self.bad_gzip,
            "/bad-chunked": self.bad_chunked,
            "/length-mismatch": self.length_mismatch,
            "/malformed-status": self.malformed_status,
            "/malformed-headers": self.malformed_headers,
            "/no-status-line": self.no_status_line,
            "/reset-mid-body": self.reset_mid_body,
            "/huge-headers": self.huge_headers,
            "/huge-header-line": self.huge_header_line,
        }

    async def slow_drip(self, req: Request, conn: Conn) -> bool:
        query = _query(req)
        interval = min(float(query.get("interval", self.spec.drip_interval)), MAX_QUERY_INTERVAL)
        count = min(int(query.get("bytes", self.spec.drip_bytes)), MAX_QUERY_BYTES)
        await conn.send_head(200, [("Content-Type", "text/plain"), ("Content-Length", str(count))])
        for _ in range(count if req.method != "HEAD" else 0):
            await asyncio.sleep(interval)
            await conn.send(b".")
        return False

    async def stall_after_headers(self, req: Request, conn: Conn) -> bool:
        await conn.send_head(200, [("Content-Type", "text/html"), ("Content-Length", "1000")])
        await conn.wait_for_peer_close(self.spec.stall_seconds)
        return False

    async def no_answer(self, req: Request, conn: Conn) -> bool:
        await conn.wait_for_peer_close(self.spec.stall_seconds)
        return False

    async def close_without_response(self, req: Request, conn: Conn) -> bool:
        return False

    async def headers_then_close(self, req: Request, conn: Conn) -> bool:
        await conn.send_head(200, [("Content-Type", "text/html"),
                                   ("Content-Length", str(HEADERS_THEN_CLOSE_LENGTH))])
        await conn.send(b"<html><body>" + b"x" * 88)
        return False

    async def big(self, req: Request, conn: Conn) -> bool:
        size = self.spec.big_bytes
        await conn.send_head(200, [("Content-Type", "application/octet-stream"),
                                   ("Content-Length", str(size))])
        if req.method != "HEAD":
            await _stream(conn, size, lambda n: b"B" * n)
        return False

    async def big_chunked(self, req: Request, conn: Conn) -> bool:
        await conn.send_head(200, [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")])
        if req.method != "HEAD":
            chunk = b"%x\r\n%s\r\n" % (STREAM_CHUNK, b"<p>more</p>" * (STREAM_CHUNK // 11)
                                       + b" " * (STREAM_CHUNK % 11))
            for _ in range(self.spec.big_chunked_cap // STREAM_CHUNK):
                await conn.send(chunk)
            await conn.send(b"0\r\n\r\n")
        return False

    async def gzip_bomb(self, req: Request, conn: Conn) -> bool:
        blob = await self.bomb()
        await conn.send_head(200, [("Content-Type", "text/html"), ("Content-Encoding", "gzip"),
                                   ("Content-Length", str(len(blob)))])
        if req.method != "HEAD":
            for start in range(0, len(blob), STREAM_CHUNK):
                await conn.send(blob[start:start + STREAM_CHUNK])
        return False

    async def bomb(self) -> bytes:
        """The gzip member inflating to spec.bomb_inflated_bytes zeros (built once)."""
        if self._bomb is None:
            self._bomb = await asyncio.to_thread(make_gzip_bomb, self.spec.bomb_inflated_bytes)
        return self._bomb

    async def bad_gzip(self, req: Request, conn: Conn) -> bool:
        body = b"<html><body>this is not gzip at all</body></html>"
        await conn.send_head(200, [("Content-Type", "text/html"), ("Content-Encoding", "gzip"),
                                   ("Content-Length", str(len(body)))])
        await conn.send(body)
        return False

    async def bad_chunked(self, req: Request, conn: Conn) -> bool:
        await conn.send_head(200, [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")])
        await conn.send(b"5\r\nhello\r\nzz\r\nnot a chunk size\r\n0\r\n\r\n")
        return False

    async def length_mismatch(self, req: Request, conn: Conn) -> bool:
        await conn.send_head(200, [("Content-Type", "text/plain"), ("Content-Length", "10")])
        # head apart from the body: a client then reads the body by its length
        # and leaves the extra bytes on the connection it parks for reuse
        await conn.flushed()
        await asyncio.sleep(SPLIT_PAUSE)
        await conn.send(b"0123456789" + b"EXTRA BYTES THAT POISON KEEP-ALIVE " * 3)
        return False

    async def malformed_status(self, req: Request, conn: Conn) -> bool:
        conn.status = -1
        await conn.send(b"HTTP/1.1 2OO Okay-ish\r\nContent-Length: 5\r\n\r\nhello")
        return False

    async def malformed_headers(self, req: Request, conn: Conn) -> bool:
        conn.status = 200
        await conn.send(b"HTTP/1.1 200 OK\r\nContent-Type text/html\r\n: empty-name\r\n"
                        b"Content-Length: 5\r\n\r\nhello")
        return False

    async def no_status_line(self, req: Request, conn: Conn) -> bool:
        await conn.send(b"<html><body>HTTP/0.9 style: no status, no headers</body></html>\n")
        return False

    async def reset_mid_body(self, req: Request, conn: Conn) -> bool:
        await conn.send_head(200, [("Content-Type", "text/html"),
                                   ("Content-Length", str(RESET_ANNOUNCED))])
        await conn.send(b"r" * self.spec.reset_after_bytes)
        await conn.flushed()
        await asyncio.sleep(0.05)  # let the bytes leave before the RST overtakes them
        conn.reset()
        return False

    async def huge_headers(self, req: Request, conn: Conn) -> bool:
        line = 1000  # bytes per filler header line
        count = max(1, self.spec.huge_headers_bytes // line)
        filler = [(f"X-Filler-{i:05d}", "h" * (line - 20)) for i in range(count)]
        return await send_response(conn, req, 200, [("Content-Type", "text/html"), *filler],
                                   b"<html><body>small body</body></html>", keep_alive=False)

    async def huge_header_line(self, req: Request, conn: Conn) -> bool:
        value = "v" * self.spec.huge_headers_bytes
        return await send_response(conn, req, 200, [("Content-Type", "text/html"),
                                                    ("X-Huge", value)],
                                   b"<html><body>small body</body></html>", keep_alive=False)


def make_gzip_bomb(inflated: int) -> bytes:
    """A gzip member of `inflated` zero bytes (rounded down to whole MiB blocks)."""
    blocks = max(1, inflated // BOMB_CHUNK)
    zeros = bytes(BOMB_CHUNK)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate, header written by hand
    block = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(blocks):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # magic, deflate, no flags, mtime 0
    final = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # empty final block
    size = blocks * BOMB_CHUNK
    return header + block * blocks + final + struct.pack("<II", crc, size & 0xFFFFFFFF)


async def _stream(conn: Conn, size: int, make) -> None:
    chunk = make(STREAM_CHUNK)
    for _ in range(size // STREAM_CHUNK):
        await conn.send(chunk)
    if size % STREAM_CHUNK:
        await conn.send(make(size % STREAM_CHUNK))


def _query(req: Request) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(req.path).query))
