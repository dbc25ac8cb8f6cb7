# The hosts and URLs of each owner's domain, for --scope domain and any. A
# wildcard-DNS site answers every name under it; pages linking to ever-new
# subdomains would add hosts without end, and each host's own budget
# (--max-pages) multiplies what they may hold. Two caps bound it: hosts per
# domain (--max-hosts-per-domain), checked when the frontier would make a
# host, and URLs per domain (--max-pages-per-domain), checked when a URL
# joins a host of a domain that has more than one. Only hosts reached by
# links count: the seeds' hosts are the operator's choice, never held.
#
# Memory: one dict item a domain, its value the domain's one host (an
# Origin the frontier holds anyway) or, from its second host on, a Crowd
# (its hosts and their URLs admitted), which the frontier reads by host id
# (crowded) to count a page's URLs to such a host in bulk; a domain of one
# host is bounded by its --max-pages alone. The frontier hands over every
# host of its hosts table at a start (load(): their `admitted` counts are
# kept there), so a resumed crawl goes on from the same counts. A PSL
# lookup costs a few microseconds, too many for every host of a large
# frontier at each start: load() groups the hosts by their last two
# labels first (a host's domain ends with them), and looks up only those
# that share them; a lone one waits in `_singles` until a host under the
# same two labels comes.
"""DomainBudget: hosts and URLs admitted per registered domain."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .scope import registered_domain

if TYPE_CHECKING:
    from .politeness import Origin

log = logging.getLogger("urlserver")
TOO_MANY_HOSTS = "too many hosts in domain (trap)"
DOMAIN_BUDGET = "domain page budget exhausted"


class Crowd:
    """A domain of two hosts or more: its hosts and the URLs admitted to them."""

    __slots__ = ("hosts", "admitted")

    def __init__(self, hosts: list[Origin]) -> None:
        self.hosts = hosts
        self.admitted = sum(h.admitted for h in hosts)


class DomainBudget:
    """The two caps of a crawl's domains (0: that cap is off)."""

    def __init__(self, *, max_hosts: int, max_pages: int, seed_hosts: set[str]) -> None:
        self.max_hosts = max_hosts or 1 << 62
        self.max_pages = max_pages or 1 << 62
        self.seed_hosts = seed_hosts  # the scope's own set: seeds added later are seen
        self.domains: dict[str, Origin | Crowd] = {}
        self.crowded: dict[int, Crowd] = {}  # host id -> its domain's crowd: the frontier's slow path
        self._singles: dict[str, Origin] = {}  # last two labels -> the one host loaded under them
        self._told: set[tuple[str, str]] = set()  # (domain, reason) logged, once each a run

    def load(self, hosts: Iterable[Origin]) -> None:
        """The hosts of the frontier's table at a start, counted in their domains."""
        groups: dict[str, list[Origin]] = {}
        for host in hosts:
            if host.name not in self.seed_hosts:
                groups.setdefault(_last_two(host.name), []).append(host)
        for key, group in groups.items():
            if len(group) == 1:
                self._singles[key] = group[0]
            else:
                for host in group:
                    self._count(host)

    def added(self, host: Origin) -> None:
        """The frontier made `host`: counted in its domain."""
        if host.name not in self.seed_hosts:
            self._count(host)

    def _count(self, host: Origin) -> None:
        domain = self._domain(host.name)
        known = self.domains.get(domain)
        if known is None:
            self.domains[host.name if domain == host.name else domain] = host  # most domains: their one host's name
        elif isinstance(known, Crowd):
            known.hosts.append(host)
            known.admitted += host.admitted
            self.crowded[host.id] = known
        else:
            crowd = self.domains[domain] = Crowd([known, host])
            self.crowded[known.id] = self.crowded[host.id] = crowd

    def new_host_reason(self, name: str) -> str | None:
        """None if a host named `name`, new to the crawl, may join it; else the reason."""
        if name in self.seed_hosts:
            return None
        domain = self._domain(name)
        known = self.domains.get(domain)
        if known is None:
            return None
        if isinstance(known, Crowd):
            if len(known.hosts) >= self.max_hosts:
                return self._refused(domain, TOO_MANY_HOSTS, f"{len(known.hosts)} hosts (--max-hosts-per-domain)")
            if known.admitted >= self.max_pages:
                return self._refused(domain, DOMAIN_BUDGET, f"{known.admitted} URLs (--max-pages-per-domain)")
        elif self.max_hosts <= 1:
            return self._refused(domain, TOO_MANY_HOSTS, "1 host (--max-hosts-per-domain)")
        elif known.admitted >= self.max_pages:
            return self._refused(domain, DOMAIN_BUDGET, f"{known.admitted} URLs (--max-pages-per-domain)")
        return None

    def admit(self, host: Origin) -> str | None:
        """None, with the URL counted in its domain, if one more URL may join
        `host` (known to the frontier); else the reason."""
        crowd = self.crowded.get(host.id)
        if crowd is None or host.name in self.seed_hosts:  # a seed given at a later start: never held
            return None
        if crowd.admitted >= self.max_pages:
            return self._refused(self._domain(host.name), DOMAIN_BUDGET,
                                 f"{crowd.admitted} URLs (--max-pages-per-domain)")
        crowd.admitted += 1
        return None

    def count_admitted(self, hosts: Iterable[Origin], added: dict[str, int]) -> None:
        """Count URLs admitted in bulk: added[host.origin] to each of `hosts`."""
        crowded = self.crowded
        for host in hosts:
            crowd = crowded.get(host.id)
            if crowd is not None:
                crowd.admitted += added[host.origin]

    def _refused(self, domain: str, reason: str, why: str) -> str:
        if (domain, reason) not in self._told:
            self._told.add((domain, reason))
            log.warning("event=domain_capped domain=%s reason=%r at=%r: links to it are FILTERED", domain, reason, why)
        return reason


    def _domain(self, name: str) -> str:
        """`name`'s owner domain, once the host loaded alone under its last two labels is counted."""
        if self._singles:
            single = self._singles.pop(_last_two(name), None)
            if single is not None:
                self._count(single)
        return registered_domain(name[:-1] if name[-1:] == "." else name)  # 'a.example.' is the name 'a.example'


def _last_two(name: str) -> str:
    """The last two labels of a host name: its owner domain ends with them."""
    return ".".join(name.rstrip(".").rsplit(".", 2)[-2:])
