# Politeness per IP address across urlserver partitions (docs/partitions.md,
# "IP politeness"), without I/O. Hosts that share an address may sit in
# different partitions, so each IP address has one token, arbitrated by the
# partition that owns the address (owner_of: the jump hash of the address
# text); a partition hands out a URL to an address only while it holds that
# address's token. Two roles, one object per partition:
#
#   holder  (every partition)  ABSENT -want-> WANTED -grant-> HELD -recall->
#                              RECALLED -(transfers ended)-> ABSENT, + IPRETURN
#   owner   (the address's)    grants the token to one partition at a time,
#                              queues the others and recalls it from the holder
#
# Times on the wire are relative milliseconds (IPGRANT ip wait-ms, IPRETURN ip
# due-ms): a delay measured by the sender and applied on arrival only ever
# errs late, by the transit time, so partitions' clocks need not agree.
# A partition that is its own owner talks to itself through the same code
# (messages to `me` are delivered at once), so one path is tested.
# The holder talks to the owner on the connection it dialled (docs/partitions.md,
# the peer link). When it closes, the holder stops handing out on those tokens at
# once, and once it has dialled again returns them (when its transfers to them
# have ended) with their due times. The owner keeps such a token as lost to
# that holder until it comes back that way, or for the lease (--timeout-req,
# the longest a transfer handed out before may still run at a spider, plus
# --ip-delay) if the holder never comes back. The owner keeps which tokens are
# out at another partition in its LMDB (take_lent, with each commit, before the
# grant is sent), so a restarted owner knows them as lost the same way, and
# the tokens nobody else had cost it nothing.
"""IpTokens: the IP-address tokens of one partition, as holder and as owner."""

from __future__ import annotations

import enum
import math
from collections import deque
from dataclasses import dataclass, field

from wreck.protocol.iptokens import IpGrant, IpRecall, IpReturn, IpWant, TokenMessage
from .partition import hash_of, jump

# A grant recalled before its holder used it stays with the holder until its
# first transfer on it ended, or this long after the grant's not-before time:
# long enough for a partition whose host is due to hand it out (its pump runs
# every few ms), short enough that a holder whose hosts wait for something
# else (robots.txt, a host delay) keeps others from the address little. Without
# it two partitions wanting one address could pass the token back and forth
# and neither would ever fetch.
GRANT_TURN_S = 2.0
# The largest wait or due time a message carries: ms fit a u32 (docs/protocol.txt 1.2).
MAX_MS = 2**32 - 1


def owner_of(ip: str, partitions: int) -> int:
    """The partition that arbitrates `ip`'s token: the one that would own `ip`
    as an IP literal host (partition.py: jump hash of the address's BLAKE2b-64)."""
    return jump(hash_of(ip), partitions) if partitions > 1 else 0


class Holding(enum.Enum):
    """A partition's hold on one address's token."""

    ABSENT = "absent"  # not held, not asked for
    WANTED = "wanted"  # IPWANT sent, waiting for IPGRANT
    HELD = "held"  # may hand out (from its not-before time)
    RECALLED = "recalled"  # the owner wants it back: no new hand-out; returned once transfers ended


class TokenError(Exception):
    """A peer sent a token message that does not fit the state (a bug on its side)."""


@dataclass(slots=True)
class _Hold:
    """The holder side of one address."""

    state: Holding = Holding.ABSENT
    not_before: float = 0.0  # no hand-out before (from the grant)
    turn_end: float = 0.0  # a recalled, unused grant is returned from then (GRANT_TURN_S)
    used: int = 0  # hand-outs since the grant
    inflight: int = 0  # this partition's transfers to the address
    next_due: float = 0.0  # the last end (or hand-out) + ip-delay
    again: bool = False  # wanted again while recalled: IPWANT right after IPRETURN
    lost: bool = False  # lost with the connection to the owner: returned once that is back


@dataclass(slots=True)
class _Arbiter:
    """The owner side of one address."""

    holder: int | None = None
    due: float = 0.0  # the next holder starts no earlier (last known end + ip-delay, or a lease)
    queue: deque = field(default_factory=deque)  # partitions waiting, in order of asking
    recalling: bool = False
    lost: int | None = None  # a holder whose connection ended: it returns the token, or the lease runs out
    lost_until: float = 0.0


class IpTokens:
    """The tokens of partition `me` of `partitions`: what it holds, and what it arbitrates.

    The caller (politeness.py) asks `may_start(ip, now)` before a hand-out,
    reports `started` and `ended`, feeds peers' messages to `received`, and
    sends what `take_messages()` returns; `take_granted()` names the
    addresses that became usable (their parked hosts are woken).
    """

    def __init__(self, *, me: int, partitions: int, ip_delay: float, lease: float, now: float,
                 lent: dict[str, int] | None = None) -> None:
        self.me, self.partitions = me, partitions
        self.ip_delay, self.lease = ip_delay, lease
        self.holds: dict[str, _Hold] = {}
        self.arbiters: dict[str, _Arbiter] = {}
        self._lent_changed: set[str] = set()  # arbiters whose partition out there changed (take_lent)
        for ip, holder in (lent or {}).items():  # out at another partition when this one stopped
            self.arbiters[ip] = _Arbiter(lost=holder, lost_until=now + lease)
        self.links_up: set[int] = {me}
        self._out: list[tuple[int, TokenMessage]] = []  # (partition, message)
        self._granted: list[str] = []
        self.grants_received = 0  # round trips paid, for /status and the bench

    # -- the holder: the politeness gate ---------------------------------------------

    def owner(self, ip: str) -> int:
        return owner_of(ip, self.partitions)

    def may_start(self, ip: str, now: float) -> float | None:
        """None: a URL may go to `ip` now; else when to look again (inf: when
        the token comes, take_granted() says so). Asks for the token if need be."""
        hold = self.holds.get(ip)
        if hold is None:
            hold = self.holds[ip] = _Hold()
        state = hold.state
        if state is Holding.HELD or (state is Holding.RECALLED and not hold.used and now < hold.turn_end):
            # a grant recalled before it was used is still good for one turn (GRANT_TURN_S)
            return None if hold.not_before <= now else hold.not_before
        if state is Holding.ABSENT:
            self._want(ip, hold, now)
            if hold.state is Holding.HELD:  # granted at once by ourselves
                return None if hold.not_before <= now else hold.not_before
        elif state is Holding.RECALLED:
            hold.again = True
        return float("inf")

    def started(self, ip: str, now: float) -> None:
        """A URL was handed out to `ip` (under the token)."""
        hold = self.holds[ip]
        hold.used += 1
        hold.inflight += 1
        hold.next_due = max(hold.next_due, now + self.ip_delay)

    def ended(self, ip: str, now: float) -> None:
        """A transfer to `ip` ended (DONE, expiry, its spider gone)."""
        hold = self.holds.get(ip)
        if hold is None or hold.inflight <= 0:
            return  # handed out before a restart: nothing of it is known here
        hold.inflight -= 1
        hold.next_due = max(hold.next_due, now + self.ip_delay)
        if hold.state is Holding.RECALLED:
            self._maybe_return(ip, hold, now)
        elif hold.lost:
            self._return_lost(ip, hold, now)

    def tick(self, now: float) -> None:
        """Return recalled grants whose turn is over; take back lost tokens
        whose lease ran out (see next_deadline)."""
        for ip, hold in list(self.holds.items()):
            if hold.state is Holding.RECALLED:
                self._maybe_return(ip, hold, now)
        for ip, arb in list(self.arbiters.items()):
            if arb.lost is not None and now >= arb.lost_until:
                arb.lost, arb.due = None, max(arb.due, arb.lost_until)
                self._lent_changed.add(ip)
                self._grant_next(ip, arb, now)

    def next_deadline(self) -> float | None:
        """When tick() next has something to do."""
        times = [h.turn_end for h in self.holds.values()
                 if h.state is Holding.RECALLED and not h.used and not h.inflight]
        times += [a.lost_until for a in self.arbiters.values() if a.lost is not None and a.queue]
        return min(times) if times else None

    def _want(self, ip: str, hold: _Hold, now: float) -> None:
        hold.state = Holding.WANTED
        owner = self.owner(ip)
        if owner in self.links_up:
            self._send(owner, IpWant(ip), now)
        # else: sent when the connection to the owner is open (found_owner)

    def _maybe_return(self, ip: str, hold: _Hold, now: float) -> None:
        if hold.inflight or (not hold.used and now < hold.turn_end):
            return
        hold.state = Holding.ABSENT
        due = max(hold.next_due, hold.not_before)
        again, hold.again = hold.again, False
        owner = self.owner(ip)
        if owner in self.links_up:
            self._send(owner, IpReturn(ip, _ms(due - now)), now)
        if again:
            self._want(ip, hold, now)

    # -- messages ------------------------------------------------------------------------

    def received(self, peer: int, message: TokenMessage, now: float) -> None:
        """A token message from partition `peer` (decoded by protocol/iptokens.py)."""
        ip = message.ip
        if isinstance(message, (IpWant, IpReturn)):
            if self.owner(ip) != self.me:
                raise TokenError(f"partition {peer} sent {type(message).__name__} {ip} to partition "
                                 f"{self.me}, which does not own it (partition {self.owner(ip)} does)")
            if isinstance(message, IpWant):
                self._on_want(peer, ip, now)
            else:
                self._on_return(peer, ip, now + message.due_ms / 1000, now)
        elif isinstance(message, IpGrant):
            self._on_grant(peer, ip, now + message.wait_ms / 1000, now)
        else:
            self._on_recall(peer, ip, now)

    def _on_grant(self, owner: int, ip: str, not_before: float, now: float) -> None:
        hold = self.holds.get(ip)
        if hold is None or hold.state is not Holding.WANTED or owner != self.owner(ip):
            # a grant crossing a link drop: give it straight back, unused
            self._send(owner, IpReturn(ip, _ms(not_before - now)), now)
            return
        hold.state, hold.not_before, hold.used = Holding.HELD, not_before, 0
        hold.turn_end = not_before + GRANT_TURN_S
        self.grants_received += 1
        self._granted.append(ip)

    def _on_recall(self, owner: int, ip: str, now: float) -> None:
        hold = self.holds.get(ip)
        if hold is None or hold.state is not Holding.HELD:
            return  # already on its way back, or lost with a link: nothing to do
        hold.state = Holding.RECALLED
        self._maybe_return(ip, hold, now)

    def _on_want(self, peer: int, ip: str, now: float) -> None:
        arb = self.arbiters.get(ip)
        if arb is None:
            arb = self.arbiters[ip] = _Arbiter()
        if arb.holder == peer:  # asked again: a grant crossed a connection's end; grant again
            self._send(peer, IpGrant(ip, _ms(arb.due - now)), now)
            return
        if peer not in arb.queue:
            arb.queue.append(peer)
        if arb.holder is None:
            self._grant_next(ip, arb, now)
        elif not arb.recalling:
            arb.recalling = True
            self._send(arb.holder, IpRecall(ip), now)

    def _on_return(self, peer: int, ip: str, due: float, now: float) -> None:
        arb = self.arbiters.get(ip)
        if arb is None:
            arb = self.arbiters[ip] = _Arbiter()
        arb.due = max(arb.due, due)
        if arb.holder == peer:
            arb.holder, arb.recalling = None, False
        elif arb.lost == peer:  # a holder cut off (or this owner restarted) gives it back: no lease
            arb.lost = None
        else:
            return  # a grant given straight back: its due time counts
        self._lent_changed.add(ip)
        self._grant_next(ip, arb, now)

    def _grant_next(self, ip: str, arb: _Arbiter, now: float) -> None:
        if not arb.queue or arb.lost is not None:
            return  # nobody waits, or a cut-off holder may still be fetching: its return or the lease
        arb.holder = arb.queue.popleft()
        self._lent_changed.add(ip)
        self._send(arb.holder, IpGrant(ip, _ms(arb.due - now)), now)
        if arb.queue:  # others wait already: the new holder takes one turn
            arb.recalling = True
            self._send(arb.holder, IpRecall(ip), now)

    def _send(self, to: int, message: TokenMessage, now: float) -> None:
        if to == self.me:
            self.received(to, message, now)
        else:
            self._out.append((to, message))

    # -- links -------------------------------------------------------------------------

    def lost_owner(self, peer: int, now: float) -> None:
        """The connection this partition dialled to `peer` closed: the tokens
        `peer` arbitrates are lost here at once (returned and asked for again by found_owner)."""
        self.links_up.discard(peer)
        for ip, hold in self.holds.items():
            if hold.state is not Holding.ABSENT and self.owner(ip) == peer:
                if hold.state is not Holding.WANTED:
                    hold.lost = True
                wanted = hold.state is Holding.WANTED or hold.again
                hold.state, hold.again = (Holding.WANTED if wanted else Holding.ABSENT), False

    def found_owner(self, peer: int, now: float) -> None:
        """The connection this partition dialled to `peer` is (again) open: give back
        what was lost with the last one (once its transfers ended), ask for what is wanted."""
        self.links_up.add(peer)
        for ip, hold in self.holds.items():
            if self.owner(ip) == peer:
                if hold.lost:
                    self._return_lost(ip, hold, now)
                if hold.state is Holding.WANTED:
                    self._send(peer, IpWant(ip), now)

    def _return_lost(self, ip: str, hold: _Hold, now: float) -> None:
        owner = self.owner(ip)
        if hold.inflight or owner not in self.links_up:
            return  # when its last transfer ends, or once the connection is back
        hold.lost = False
        self._send(owner, IpReturn(ip, _ms(max(hold.next_due, hold.not_before) - now)), now)

    def lost_holder(self, peer: int, now: float) -> None:
        """The connection `peer` dialled to this partition closed: it leaves every
        queue, and the tokens it held are lost to it until it returns them or the lease ends."""
        for ip, arb in self.arbiters.items():
            if peer in arb.queue:
                arb.queue.remove(peer)
            if arb.holder == peer:
                arb.holder, arb.recalling = None, False
                arb.lost, arb.lost_until = peer, now + self.lease

    def take_lent(self) -> list[tuple[str, int | None]]:
        """The addresses whose token went out to another partition, or came
        back, since the last call: (ip, that partition or None), to keep
        with the commit (a restarted owner reads them: `lent`)."""
        out = []
        for ip in self._lent_changed:
            arb = self.arbiters[ip]
            out_at = arb.holder if arb.holder not in (None, self.me) else arb.lost
            out.append((ip, out_at))
        self._lent_changed.clear()
        return out

    # -- for the caller --------------------------------------------------------------------

    def take_messages(self) -> list[tuple[int, TokenMessage]]:
        """Messages to send: (partition, message)."""
        out, self._out = self._out, []
        return out

    def take_granted(self) -> list[str]:
        """Addresses granted since the last call: wake the hosts parked on them."""
        out, self._granted = self._granted, []
        return out

    def holding(self, ip: str) -> Holding:
        hold = self.holds.get(ip)
        return Holding.ABSENT if hold is None else hold.state


def _ms(seconds: float) -> int:
    """A relative time for the wire: whole ms, rounded up (never early), 0..MAX_MS."""
    return min(max(math.ceil(seconds * 1000), 0), MAX_MS)
