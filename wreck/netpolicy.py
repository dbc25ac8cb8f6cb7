# Which IP addresses a crawl may connect to: the one policy the urlserver
# applies to DNS answers and the spider applies again at connect time, so
# both refuse the same addresses for the same reason.
#
# Public unicast is admitted; every special-purpose range of the IANA IPv4
# and IPv6 Special-Purpose Address Registries that is not globally
# reachable is refused (loopback, private, shared/CGN, link-local,
# multicast, documentation, benchmarking, reserved, broadcast, ...), and in
# IPv6 anything outside global unicast 2000::/3. An --allow-net CIDR that
# contains the address admits it anyway.
#
# IPv6 forms that carry an IPv4 address are judged by it:
#   ::ffff:a.b.c.d   IPv4-mapped: the kernel connects to a.b.c.d itself, so
#                    it is exactly that address (an allow_net CIDR for the
#                    IPv4 admits it too);
#   ::ffff:0:a.b.c.d, 64:ff9b::/96 (NAT64), 2002::/16 (6to4), 2001::/32
#                    (Teredo: server and client): a translator or relay
#                    delivers to the embedded address, so it must be public
#                    (and only an IPv6 CIDR admits the IPv6 form itself).
# Pure: no I/O; the caller caches.
"""AddressPolicy.refusal(ip) -> None (admitted) or why not."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _table(rows: tuple[tuple[str, str], ...]) -> tuple[tuple[Network, str], ...]:
    return tuple((ipaddress.ip_network(cidr), why) for cidr, why in rows)


# RFC 6890 and the IANA IPv4 Special-Purpose Address Registry: every range
# that is not globally reachable. Narrower rows first (their name wins).
FORBIDDEN_V4 = _table((
    ("0.0.0.0/8", "this network"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared address space (carrier-grade NAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "6to4 relay anycast"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("255.255.255.255/32", "broadcast"),
    ("240.0.0.0/4", "reserved"),
))  # fmt: skip

# IPv6 ranges that embed an IPv4 address (see the opening comment).
MAPPED = ipaddress.ip_network("::ffff:0:0/96")
TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # RFC 6052 SIIT
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix
SIX_TO_FOUR = ipaddress.ip_network("2002::/16")  # RFC 3056
TEREDO = ipaddress.ip_network("2001::/32")  # RFC 4380
GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")

# Inside 2000::/3, the ranges that are not globally reachable.
FORBIDDEN_V6_GLOBAL = _table((
    ("2001:db8::/32", "documentation"),
    ("2001::/23", "IETF protocol assignments"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "segment routing"),
))  # fmt: skip
# Outside 2000::/3 everything is refused; these rows only name the reason.
NAMED_V6 = _table((
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("::/96", "IPv4-compatible (deprecated)"),
    ("64:ff9b:1::/48", "local-use IPv4/IPv6 translation"),
    ("100::/64", "discard-only"),
    ("fc00::/7", "unique local (private)"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local (deprecated)"),
    ("ff00::/8", "multicast"),
))  # fmt: skip


class AddressPolicy:
    """refusal(ip) -> None if a crawl may connect to `ip`, else the reason.

    `allow_net` holds CIDRs admitted beyond public unicast (--allow-net).
    """

    def __init__(self, allow_net: Iterable[str] = ()) -> None:
        self.networks: tuple[Network, ...] = tuple(ipaddress.ip_network(c, strict=False) for c in allow_net)

    def refusal(self, ip: str) -> str | None:
        """None if admitted; else 'forbidden address X (why)' or why it is no address."""
        text = ip[1:-1] if ip.startswith("[") and ip.endswith("]") else ip
        if "%" in text:
            return f"not an address to crawl: {ip!r} (zone index)"
        try:
            addr: Address = ipaddress.ip_address(text)
        except ValueError:
            return f"not an IP address: {ip!r}"
        if self._allowed(addr):
            return None
        why = self._why(addr)
        return None if why is None else f"forbidden address {addr} ({why})"

    def admits(self, ip: str) -> bool:
        return self.refusal(ip) is None

    def _allowed(self, addr: Address) -> bool:
        return any(addr.version == net.version and addr in net for net in self.networks)

    def _why(self, addr: Address) -> str | None:
        if addr.version == 4:
            return _v4_why(addr)
        if addr in MAPPED:  # the very IPv4 address
            v4 = addr.ipv4_mapped
            why = None if self._allowed(v4) else _v4_why(v4)
            return why and f"IPv4-mapped {v4}: {why}"
        embedded = _embedded_v4(addr)
        if embedded:
            kind, v4s = embedded
            for v4 in v4s:
                why = _v4_why(v4)
                if why:
                    return f"{kind} of {v4}: {why}"
            return None
        if addr in GLOBAL_UNICAST:
            return _first(addr, FORBIDDEN_V6_GLOBAL)
        return _first(addr, NAMED_V6) or "reserved"


def _v4_why(addr: ipaddress.IPv4Address) -> str | None:
    return _first(addr, FORBIDDEN_V4)


def _first(addr: Address, table: tuple[tuple[Network, str], ...]) -> str | None:
    for net, why in table:
        if addr in net:
            return why
    return None


def _embedded_v4(addr: ipaddress.IPv6Address) -> tuple[str, tuple[ipaddress.IPv4Address, ...]] | None:
    """(kind, the IPv4 addresses it leads to) for translation and tunnel forms."""
    low32 = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if addr in NAT64:
        return "NAT64", (low32,)
    if addr in TRANSLATED:
        return "IPv4-translated", (low32,)
    if addr in SIX_TO_FOUR:
        return "6to4", (addr.sixtofour,)
    if addr in TEREDO:
        server, client = addr.teredo
        return "Teredo", (server, client)
    return None
