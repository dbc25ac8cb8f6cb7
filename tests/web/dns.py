# A tiny authoritative DNS responder for the test web's names, on loopback.
#
# Listens on UDP and TCP (same OS-chosen port) at 127.0.0.1.  answer() is the
# whole logic, bytes in and bytes out, built on dnspython's message parsing:
# A queries for known names (or names under a '*.PARENT' wildcard of the
# table) get the address with the configured TTL, other
# types for known names get an empty NOERROR (no IPv6 here), unknown names get
# NXDOMAIN.  Tests can steer it from any thread: override() answers a name with
# another 127.x address (DNS rebinding), silence() makes it never answer a name
# (resolver timeouts).  Every query is logged as a DnsQuery.

from __future__ import annotations

import asyncio
import dataclasses
import errno
import ipaddress
import struct
import threading
import time
from collections.abc import Mapping

import dns.exception
import dns.flags
import dns.message
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset

LISTEN_IP = "127.0.0.1"
BIND_ATTEMPTS = 20
"""Tries at finding a port free for both UDP and TCP."""
MAX_TCP_MESSAGE = 65535
"""DNS-over-TCP length prefix is 16 bits."""


@dataclasses.dataclass(frozen=True)
class DnsQuery:
    """One query as the responder saw it."""

    wall_time: float
    mono_time: float
    transport: str
    client: tuple[str, int]
    name: str
    qtype: str
    outcome: str
    """'NOERROR', 'NXDOMAIN', 'FORMERR', or 'dropped' when silenced."""
    address: str | None


_RDTYPE = {False: dns.rdatatype.A, True: dns.rdatatype.AAAA}  # by ':' in the address


class DnsResponder:
    """Answers A (IPv4) and AAAA (IPv6) queries for a name -> address table.
    start()/stop() on a running loop."""

    def __init__(self, addresses: Mapping[str, str], *, ttl: int = 60, ip: str = LISTEN_IP,
                 port: int = 0) -> None:
        self.ttl, self._ip, self._port = ttl, ip, port
        self._lock = threading.Lock()
        self._table = {name.lower(): addr for name, addr in addresses.items()}
        self._overrides: dict[str, str] = {}
        self._silent: set[str] = set()
        self._queries: list[DnsQuery] = []
        self._udp: asyncio.DatagramTransport | None = None
        self._tcp: asyncio.Server | None = None

    @property
    def address(self) -> tuple[str, int]:
        """(ip, port) to point a resolver at."""
        if self._udp is None:
            raise RuntimeError("DnsResponder is not started")
        return self._udp.get_extra_info("sockname")[:2]

    def override(self, name: str, ip: str) -> None:
        """Answer `name` with `ip` (must be in 127.0.0.0/8) from now on."""
        if ipaddress.IPv4Address(ip) not in ipaddress.IPv4Network("127.0.0.0/8"):
            raise ValueError(f"{ip} is not a loopback address")
        with self._lock:
            self._overrides[name.lower().rstrip(".")] = ip

    def silence(self, name: str, silent: bool = True) -> None:
        """Stop (or resume) answering queries for `name`."""
        with self._lock:
            (self._silent.add if silent else self._silent.discard)(name.lower().rstrip("."))

    def reset(self) -> None:
        """Drop every override and silence."""
        with self._lock:
            self._overrides.clear()
            self._silent.clear()

    def queries(self) -> list[DnsQuery]:
        """A snapshot of the query log."""
        with self._lock:
            return list(self._queries)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(BIND_ATTEMPTS):
            self._udp, _ = await loop.create_datagram_endpoint(
                lambda: _UdpProtocol(self), local_addr=(self._ip, self._port))
            port = self._udp.get_extra_info("sockname")[1]
            try:
                self._tcp = await asyncio.start_server(self._serve_tcp, self._ip, port)
                return
            except OSError as exc:
                self._udp.close()
                if exc.errno != errno.EADDRINUSE or self._port:
                    raise
        raise OSError(errno.EADDRINUSE, "no port free for both UDP and TCP")

    async def stop(self) -> None:
        if self._udp:
            self._udp.close()
        if self._tcp:
            self._tcp.close()
            await self._tcp.wait_closed()

    def answer(self, wire: bytes, client: tuple[str, int], transport: str) -> bytes | None:
        """The response to one query message, or None to stay silent."""
        try:
            query = dns.message.from_wire(wire)
        except dns.exception.DNSException:
            return self._formerr(wire, client, transport)
        if len(query.question) != 1:
            response = dns.message.make_response(query)
            response.set_rcode(dns.rcode.FORMERR)
            self._log(transport, client, "", "", "FORMERR", None)
            return response.to_wire()
        question = query.question[0]
        name = question.name.to_text(omit_final_dot=True).lower()
        qtype = dns.rdatatype.to_text(question.rdtype)
        with self._lock:
            silent = name in self._silent
            ip = self._overrides.get(name, self._table.get(name))
            if ip is None:
                ip = self._wildcard(name)
        if silent:
            self._log(transport, client, name, qtype, "dropped", None)
            return None
        response = dns.message.make_response(query)
        response.flags |= dns.flags.AA
        if ip is None:
            response.set_rcode(dns.rcode.NXDOMAIN)
        elif question.rdclass == dns.rdataclass.IN and question.rdtype == _RDTYPE[":" in ip]:
            # A for an IPv4 address, AAAA for an IPv6 one; the other type gets
            # NOERROR with no answer, as a real zone with one family does.
            response.answer.append(dns.rrset.from_text(question.name, self.ttl, "IN", qtype, ip))
        self._log(transport, client, name, qtype, dns.rcode.to_text(response.rcode()),
                  ip if response.answer else None)
        return response.to_wire()

    def _wildcard(self, name: str) -> str | None:
        """The address of the closest wildcard '*.PARENT' above `name`, if any
        (RFC 4592: '*.wild.test' answers a.wild.test and b.a.wild.test)."""
        labels = name.split(".")
        for i in range(1, len(labels)):
            ip = self._table.get("*." + ".".join(labels[i:]))
            if ip is not None:
                return ip
        return None

    def _formerr(self, wire: bytes, client, transport: str) -> bytes | None:
        self._log(transport, client, "", "", "FORMERR", None)
        if len(wire) < 12:
            return None  # not even a header to answer
        msg_id = struct.unpack("!H", wire[:2])[0]
        return struct.pack("!HHHHHH", msg_id, 0x8000 | dns.rcode.FORMERR, 0, 0, 0, 0)

    def _log(self, transport, client, name, qtype, outcome, address) -> None:
        record = DnsQuery(time.time(), time.monotonic(), transport, tuple(client[:2]), name,
                          qtype, outcome, address)
        with self._lock:
            self._queries.append(record)

    async def _serve_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = writer.get_extra_info("peername")
        try:
            while True:
                (length,) = struct.unpack("!H", await reader.readexactly(2))
                reply = self.answer(await reader.readexactly(length), client, "tcp")
                if reply is not None and len(reply) <= MAX_TCP_MESSAGE:
                    writer.write(struct.pack("!H", len(reply)) + reply)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


class _UdpProtocol(asyncio.DatagramProtocol):
    def __init__(self, responder: DnsResponder) -> None:
        self.responder = responder
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr) -> None:
        reply = self.responder.answer(data, addr, "udp")
        if reply is not None and self.transport:
            self.transport.sendto(reply, addr)
