# Which addresses a spider may connect to. Public unicast is always allowed;
# loopback, private, link-local, multicast, reserved and unspecified
# addresses only when a CIDR of the handshake's allow_net admits them.
# IPv4-mapped and 6to4/NAT64-free forms are judged by the IPv4 they carry,
# so ::ffff:127.0.0.1 is loopback. Pure; answers are cached per address.
"""AllowNet: the address policy applied before and at connect time."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

# Distinct addresses remembered; a crawl touches many hosts but the set of
# addresses one worker sees in a while is far smaller. Cleared when full.
CACHE_MAX = 65_536

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class AllowNet:
    """admits(ip) -> bool, from the allow_net CIDRs of CrawlSettings."""

    def __init__(self, cidrs: Iterable[str] = ()) -> None:
        self.networks = tuple(ipaddress.ip_network(c, strict=False) for c in cidrs)
        self._cache: dict[str, bool] = {}

    def admits(self, ip: str) -> bool:
        known = self._cache.get(ip)
        if known is None:
            known = self._judge(ip)
            if len(self._cache) >= CACHE_MAX:
                self._cache.clear()
            self._cache[ip] = known
        return known

    def _judge(self, ip: str) -> bool:
        try:
            addr: Address = ipaddress.ip_address(ip.strip("[]").split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        if any(addr.version == net.version and addr in net for net in self.networks):
            return True
        return addr.is_global and not addr.is_multicast and not addr.is_reserved
