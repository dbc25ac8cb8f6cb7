# Handing a busy host's next URLs ahead (docs/protocol.txt 5.3, after=).
# At --delay 0 a host's next request may follow its last response at once,
# but the DONE that frees the host's slot comes only after the store's
# commit and is answered only after the urlserver's: two fsyncs, tens of ms
# on a real disk, for a page that took 1 ms to fetch (issue 16). So every
# transaction the politeness slot lets start begins a chain, and while its
# host has nothing else holding it the urlserver may hand the same spider up
# to `lookahead` more of the host's URLs, each with after=T, T the chain's
# last transaction: the spider starts each as the transfer before it ends.
# A chain is one transfer at a time on the wire, so it takes one place of
# the host's and IP's slots (politeness.py), from its first handout until
# its last transaction has ended. A chain whose last transaction ended
# before the others (expired, cancelled) is closed: extending it could start
# a second transfer beside the one still running.
"""Chains: transactions a spider runs one after the other on one host."""

from __future__ import annotations

import itertools

# Chains looked at per take(): a spider may hold one per host in flight
# (thousands), most with nothing queued at a given moment.
SCAN = 32


class Chain:
    """Transactions of one host held by one spider, fetched one after the other."""

    __slots__ = ("host", "ip", "spider", "tail", "alive")

    def __init__(self, host, ip: str, spider, trans_id: int) -> None:
        self.host, self.ip, self.spider = host, ip, spider  # ip: whose slot the chain holds
        self.tail: int | None = trans_id  # the last transaction handed out; None once closed
        self.alive = 1  # its transactions not ended yet


class Chains:
    """trans_id -> its Chain, and per spider the chains it may be handed more of."""

    def __init__(self, lookahead: int) -> None:
        self.lookahead = lookahead
        self._of: dict[int, Chain] = {}
        self._open: dict[object, dict[Chain, None]] = {}  # spider -> chains with room (an ordered set)

    def started(self, trans_id: int, host, ip: str, spider, *, ahead: bool = True) -> None:
        """A transaction the politeness slot let start: a new chain, which
        may grow when `ahead` (its spider honours after=, docs/protocol.txt 3.1)."""
        chain = self._of[trans_id] = Chain(host, ip, spider, trans_id)
        if self.lookahead and ahead:
            self._open.setdefault(spider, {})[chain] = None

    def extended(self, chain: Chain, trans_id: int) -> int:
        """`trans_id` was handed after the chain's tail; returns that tail (its after=)."""
        before = chain.tail
        chain.tail = trans_id
        chain.alive += 1
        self._of[trans_id] = chain
        if chain.alive > self.lookahead:  # the running one and `lookahead` behind it
            self._drop(chain)
        return before

    def ended(self, trans_id: int) -> bool:
        """A transaction ended (DONE, expiry, spider gone, unsendable); True
        when it was its chain's last alive, so the host's slot is free."""
        chain = self._of.pop(trans_id, None)
        if chain is None:
            return True
        chain.alive -= 1
        if chain.tail == trans_id:
            chain.tail = None  # closed (see the top)
        if chain.tail is None or chain.alive == 0:
            self._drop(chain)
        elif chain.alive <= self.lookahead:
            self._open.setdefault(chain.spider, {})[chain] = None
        return chain.alive == 0

    def candidates(self, spider) -> list[Chain]:
        """Up to SCAN chains `spider` may be handed one more transaction of,
        in turn: those returned go to the back, so a take() that finds
        nothing costs SCAN checks, not one per host in flight."""
        chains = self._open.get(spider)
        if not chains:
            return []
        out = list(itertools.islice(chains, SCAN))
        for chain in out:
            del chains[chain]
            chains[chain] = None
        return out

    def _drop(self, chain: Chain) -> None:
        """`chain` has no room (for now), or it is closed."""
        chains = self._open.get(chain.spider)
        if chains is not None:
            chains.pop(chain, None)
            if not chains:
                del self._open[chain.spider]
