# Which addresses a spider may connect to: wreck.netpolicy's policy (the
# one the urlserver applied to the DNS answer) with the handshake's
# allow_net CIDRs, checked again before and at connect time, with answers
# cached per address.
"""AllowNet: the address policy applied before and at connect time."""

from __future__ import annotations

from wreck.netpolicy import AddressPolicy

# Distinct addresses remembered; a crawl touches many hosts but the set of
# addresses one worker sees in a while is far smaller. Cleared when full.
CACHE_MAX = 65_536


class AllowNet(AddressPolicy):
    """admits(ip) -> bool, cached; refusal(ip) says why not."""

    def __init__(self, cidrs=()) -> None:
        super().__init__(cidrs)
        self._cache: dict[str, bool] = {}

    def admits(self, ip: str) -> bool:
        known = self._cache.get(ip)
        if known is None:
            known = self.refusal(ip) is None
            if len(self._cache) >= CACHE_MAX:
                self._cache.clear()
            self._cache[ip] = known
        return known
