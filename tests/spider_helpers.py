"""Shared by the spider tests: a self-signed TLS server, fast crawl settings, one raw answer fetched."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
import uvloop

from wreck.protocol.settings import CrawlSettings
from wreck.spider.fetch import PLAIN, Fetcher, FetchSettings, Request
from wreck.spider.report import report

# bench/realdocs.py's trees, where Debian installed them (tests never import bench/)
REALDOCS = ("/usr/share/doc/python3.11/html", "/usr/share/doc/libsdl2-doc/html", "/usr/share/doc/lmdb-doc/html",
            "/usr/share/doc/libcommons-lang3-java/api", "/usr/share/gtk-doc/html/glib",
            "/usr/share/debian-reference", "/usr/share/doc/git-doc")

LOOPBACK = ("127.0.0.0/8",)


def crawl_settings(store: tuple[str, ...] = ("127.0.0.1:1",), **overrides) -> CrawlSettings:
    """Small bounds so every hostile case ends within a few seconds."""
    values = dict(
        store=store, timeout_update_ms=1000, timeout_req_ms=3000, max_doc_size=1 << 20,
        user_agent="wreck-test/0.1 (+mailto:test@example.org)", allow_net=LOOPBACK,
        connect_timeout_ms=1000, spider_id="",
    )
    values.update(overrides)
    return CrawlSettings(**values)


def self_signed(directory: Path, host: str) -> ssl.SSLContext:
    """A server context with a fresh self-signed certificate for `host`."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_path, key_path)
    return context


async def serve_tls(context: ssl.SSLContext, ip: str = "127.0.0.1") -> asyncio.Server:
    """A TLS server answering any request with a tiny 200 page."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(answer, ip, 0, ssl=context)


def fetch_raw(response: bytes, request: Request | None = None, asked: list | None = None, **settings) -> tuple:
    """(report, result) of one GET on a Fetcher, a loopback server answering `response` as is;
    `asked` gets each request's header block as the server read it; `settings` are the
    handshake's (crawl_settings' overrides)."""

    async def run():
        async def answer(reader, writer):
            head = await reader.readuntil(b"\r\n\r\n")
            if asked is not None:
                asked.append(head)
            writer.write(response)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        url = "http://127.0.0.1:%d/p" % server.sockets[0].getsockname()[1]
        done = asyncio.get_running_loop().create_future()
        fetcher = Fetcher(asyncio.get_running_loop(), FetchSettings.from_crawl(crawl_settings(**settings)), done.set_result)
        try:
            fetcher.start(url, url, "127.0.0.1", PLAIN if request is None else request)
            result = await asyncio.wait_for(done, 30)
        finally:
            fetcher.close()
            server.close()
        return report(result, 1), result

    return uvloop.run(run())
