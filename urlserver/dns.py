# Host name -> one admitted IPv4/IPv6 address (A first, AAAA when a name
# has no A record). A static map (--hosts, hosts-file format, read by
# wreck/hostsfile.py) wins over DNS; DNS is dnspython's async resolver pointed
# at --dns IP:PORT or the system's resolvers, with a cache that honours the
# answer's TTL (clamped), caches failures (negative caching) and retries
# timeouts. wreck.netpolicy decides whether an address may ever be
# handed to a spider: public unicast only, unless an --allow-net CIDR
# admits it. Of several A records the first admitted one is used.
# dnspython is imported, and its resolver made, at the first name that
# needs DNS: a crawl whose names are all in --hosts never pays for it
# (0.04 CPU-s of every wreck-crawl's start, issue 16).
"""DNS resolution with caching, static hosts, and address admission."""

from __future__ import annotations

import ipaddress
import time

from wreck.netpolicy import AddressPolicy

from .errorkind import ErrorKind


class Resolution:
    """A cached answer: an address, or the reason there is none (`error`,
    free text for the log and the URL records; `kind`, its ErrorKind;
    `refused`, the addresses the answer held that were not admitted)."""

    __slots__ = ("ip", "error", "expires", "terminal", "kind", "refused")

    def __init__(self, ip: str | None, error: str, expires: float, terminal: bool = False, *,
                 kind: ErrorKind = ErrorKind.DNS_FAILED, refused: tuple[str, ...] = ()) -> None:
        self.ip, self.error, self.expires, self.terminal = ip, error, expires, terminal
        self.kind, self.refused = kind, refused

    def __repr__(self) -> str:
        return f"Resolution({self.ip or self.error!r})"


def _wire_form(ip: str) -> str | None:
    """`ip` as the protocol writes an address (docs/protocol.txt 5.3: an
    IPv4-mapped address as its IPv4 address, no zone index), or None."""
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return None
    if getattr(addr, "scope_id", None):
        return None
    mapped = getattr(addr, "ipv4_mapped", None)
    return str(mapped or addr)


class Resolver:
    """resolve(name) -> Resolution, cached."""

    def __init__(self, *, nameserver: str | None, hosts: dict[str, str], allow_net: tuple,
                 timeout: float, tries: int, min_ttl: float, max_ttl: float, negative_ttl: float,
                 clock=time.time) -> None:
        self.hosts = hosts
        self.policy = AddressPolicy(allow_net)
        self.timeout, self.tries = timeout, tries
        self.min_ttl, self.max_ttl, self.negative_ttl = min_ttl, max_ttl, negative_ttl
        self.clock = clock
        self.cache: dict[str, Resolution] = {}
        self.lookups = self.failures = 0
        self._nameserver: tuple[str, int] | None = None
        if nameserver:
            ip, _, port = nameserver.rpartition(":")
            self._nameserver = (ip.strip("[]"), int(port))
        self._resolver = None  # dnspython's, made by _dns() at the first query
        self._made = False

    def _dns(self):
        """dnspython's resolver (None: the system has no resolver configured),
        made once, at the first name that is neither in --hosts nor a literal."""
        if not self._made:
            self._made = True
            import dns.asyncresolver
            import dns.resolver

            if self._nameserver:
                self._resolver = dns.asyncresolver.Resolver(configure=False)
                self._resolver.nameservers = [self._nameserver[0]]
                self._resolver.port = self._nameserver[1]
            else:
                try:
                    self._resolver = dns.asyncresolver.Resolver()
                except dns.resolver.NoResolverConfiguration:
                    self._resolver = None
            if self._resolver is not None:
                self._resolver.cache = None  # ours honours TTLs and caches failures too
                self._resolver.lifetime = self.timeout
        return self._resolver

    def cached(self, name: str) -> Resolution | None:
        found = self.cache.get(name)
        if found is not None and found.expires > self.clock():
            return found
        return None

    def _admit(self, ips: list[str], expires: float) -> Resolution:
        """The first admitted address of `ips`; else the first one's refusal (terminal)."""
        refusals, refused = [], []
        for ip in ips:
            why = self.policy.refusal(ip)
            if why is None:
                mapped = ipaddress.ip_address(ip).ipv4_mapped if ":" in ip else None
                # the protocol carries the IPv4 address itself, never its mapped form
                return Resolution(str(mapped) if mapped else ip, "", expires)
            refusals.append(why)
            if (named := _wire_form(ip)) is not None:
                refused.append(named)
        return Resolution(None, refusals[0], expires, terminal=True, kind=ErrorKind.FORBIDDEN_ADDRESS,
                          refused=tuple(refused))

    async def resolve(self, name: str) -> Resolution:
        """The cached or fresh answer for `name` (never raises)."""
        found = self.cached(name)
        if found is not None:
            return found
        now = self.clock()
        static = self.hosts.get(name)
        if static is not None:
            result = self._admit([static], now + self.max_ttl)
        else:
            try:
                literal = str(ipaddress.ip_address(name.strip("[]")))
            except ValueError:
                literal = None
            result = self._admit([literal], now + self.max_ttl) if literal else await self._query(name)
        self.cache[name] = result
        return result

    async def _query(self, name: str) -> Resolution:
        self.lookups += 1
        resolver = self._dns()
        if resolver is None:
            return Resolution(None, "dns: no resolver configured", self.clock() + self.negative_ttl)
        import dns.exception  # imported by _dns() already: a lookup in sys.modules
        import dns.resolver

        error = "dns: timeout"
        rdtypes = ["A", "AAAA"]  # IPv4 first; a name with no A record may still have AAAA
        attempts = 0
        while attempts < self.tries:
            attempts += 1
            try:
                answer = await resolver.resolve(name, rdtypes[0], lifetime=self.timeout)
            except dns.resolver.NXDOMAIN:
                self.failures += 1
                return Resolution(None, "dns: NXDOMAIN", self.clock() + self.negative_ttl, terminal=True,
                                  kind=ErrorKind.DNS_NXDOMAIN)
            except dns.resolver.NoAnswer:
                if len(rdtypes) > 1:
                    rdtypes.pop(0)
                    attempts -= 1  # an answer, not a failure: the next type gets every try
                    continue
                self.failures += 1
                return Resolution(None, "dns: no address", self.clock() + self.negative_ttl, terminal=True,
                                  kind=ErrorKind.DNS_NO_ADDRESS)
            except dns.exception.Timeout:
                error = "dns: timeout"
                continue
            except dns.exception.DNSException as exc:
                error = f"dns: {type(exc).__name__}"
                continue
            ttl = min(max(float(answer.rrset.ttl), self.min_ttl), self.max_ttl)
            return self._admit([rr.address for rr in answer.rrset], self.clock() + ttl)
        self.failures += 1
        return Resolution(None, error, self.clock() + self.negative_ttl)
