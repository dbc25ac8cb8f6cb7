# Who may be served next, in O(log n): origins waiting for their turn sit in a
# heap ordered by the time they may next be served (lazy deletion: an entry
# whose version is stale is skipped). Queues are per origin (robots.txt is),
# but politeness is per host name: the origins of one name (http and https,
# other ports) share a slot (after Scrapy's Slot(concurrency, delay,
# lastseen)) that bounds transactions in flight and the gap between two
# transactions (counted from the handout and again from the end of the
# previous one), so a server never sees twice the rate because a site links
# both schemes. Per IP address another slot does the same for every host on
# that address. An origin held by a full slot parks on it and goes back to
# the heap when one of that slot's transactions ends.
# A host name that answers 429 or 5xx is slowed down as a whole: its slot's
# delay (Slot.slow) doubles with each such answer up to a cap, a
# Retry-After holds the name that long, and each other answer halves it.
# Slots survive a restart, even a kill -9: every slot touched since the last
# commit is written with it (db.py's paces: next allowed time, delay, whether
# a transaction was in flight), before the assignments go out, and restore()
# seeds the slots at start. The rule (docs/architecture.md, politeness):
#   next_ok = min(saved next_ok, restart + delay)  (last handout or end + delay)
#   next_ok = restart + delay                      if one was in flight
# A transaction in flight at the kill ended at an unknown time: before the
# restart if its spider gave up or answered the dead server, so counting its
# end as the restart itself is the earliest safe bound the new server has.
# With urlserver partitions, hosts on one address may sit in different
# partitions: the IP slot then also needs the address's token (iptoken.py,
# docs/partitions.md "IP politeness"), so one partition at a time hands out
# to an address; an origin waiting for it parks on the IP slot (Waiting.IP_TOKEN)
# until the grant arrives.
"""Origins, their host-name and IP slots, and the next-allowed-time heap."""

from __future__ import annotations

import enum
import heapq
import itertools

from .iptoken import Holding, IpTokens
from .robotsstate import RobotsState

# The first slow-down of a host whose delay is (near) zero: a 429/5xx storm
# from a fast host must still space its requests at once.
SLOWDOWN_FLOOR = 0.25


class Waiting(enum.Enum):
    """Why an origin is out of the politeness heap; /status counts origins by value."""

    NONE = ""  # it is not held: in the heap, or without work
    DNS = "dns"  # its name is being resolved
    ROBOTS = "robots"  # its robots.txt is being fetched
    ROBOTS_RETRY = "robots retry"  # its robots.txt was unreachable; waits for the retry
    HOST = "host"  # its name's slot is full (--host-concurrency)
    IP = "ip"  # its address's slot is full (--ip-concurrency)
    BACKOFF = "backoff"  # it answered 429/5xx: its delay is doubled until it answers normally
    CRAWL_DELAY = "crawl-delay"  # its robots.txt Crawl-delay, longer than --delay, holds it
    PAUSED = "paused"  # the operator paused its host name (control.py)
    IP_TOKEN = "ip token"  # another partition holds its address's token (iptoken.py)

    __hash__ = object.__hash__  # singletons: an identity hash, in C (HELD is tested on every wake)


# woken by an answer, a slot or the operator's resume, not by new work
HELD = frozenset((Waiting.DNS, Waiting.HOST, Waiting.IP, Waiting.PAUSED, Waiting.IP_TOKEN))


class Slot:
    """Politeness of one host name (shared by its origins: http, https, other
    ports), or of one IP address (shared by every name on it)."""

    __slots__ = ("key", "inflight", "next_ok", "parked", "slow", "gap", "floor")

    def __init__(self, key: str) -> None:
        self.key = key
        self.inflight = 0
        self.next_ok = 0.0
        self.gap = 0.0  # the delay last applied (persisted: the in-flight rule counts it from a restart)
        self.slow = 0.0  # a host name's delay raised after 429/5xx answers (0: not slowed down)
        self.parked: list = []  # hosts waiting for one of this slot's transactions to end
        self.floor = 0.0  # a host name's delay set by the operator (PUT /api/hosts/HOST/delay)


class Origin:
    """One origin (scheme://host:port): its queue bounds, and its name's politeness slot."""

    __slots__ = ("origin", "name", "id", "head", "tail", "admitted", "slot",
                 "delay", "version", "in_heap", "ip", "addr_state", "robots", "robots_jobs", "_waiting", "board",
                 "via", "via_url")

    def __init__(self, origin: str, name: str, host_id: int, head: int, tail: int, admitted: int,
                 board=None) -> None:
        self.origin, self.name, self.id = origin, name, host_id
        self.head, self.tail = head, tail  # queue seqs: [head, tail)
        self.admitted = admitted  # URLs admitted to this origin's queue, for the budget
        self.slot: Slot | None = None  # shared by the origins of this name, set by Politeness
        self.delay = 0.0  # max(--delay, Crawl-delay), set once robots.txt is known
        self.version = 0
        self.in_heap = False
        self.ip: str | None = None
        self.addr_state = None  # dns.Resolution or None while unknown
        self.robots = RobotsState(origin)  # this origin's robots.txt: phase, rules, tries
        self.robots_jobs: list = []  # robots.txt fetches (maybe for other hosts) to run here
        self._waiting = Waiting.NONE  # why the origin is out of the heap
        self.board = board  # hostview.HostBoard, told of every change of `waiting`
        # the via fingerprint and URL of the last URL handed out (crawl.py, VIA_CACHE): its next
        # URLs, the rest of one page's links, read it here. One URL at most (--max-url-len), and
        # none once the queue is empty, so an origin without work holds nothing.
        self.via: bytes | None = None
        self.via_url: str | None = None
        if board is not None:
            board.born(self)

    @property
    def waiting(self) -> Waiting:
        """Why the origin is out of the heap (NONE: it is not held)."""
        return self._waiting

    @waiting.setter
    def waiting(self, value: Waiting) -> None:
        old = self._waiting
        if old is not value:  # the usual case on the hot path: NONE again
            self._waiting = value
            if self.board is not None:
                self.board.moved(self, old, value)

    @property
    def inflight(self) -> int:
        """Transactions in flight on this host name (every origin of it)."""
        return self.slot.inflight if self.slot is not None else 0

    @property
    def next_ok(self) -> float:
        """When this host name may next be served."""
        return self.slot.next_ok if self.slot is not None else 0.0

    @property
    def slow(self) -> float:
        """This host name's delay after 429/5xx answers (0: not slowed down)."""
        return self.slot.slow if self.slot is not None else 0.0

    @property
    def queued(self) -> int:
        return self.tail - self.head

    def __repr__(self) -> str:
        return f"<Origin {self.origin} queued={self.queued} inflight={self.inflight}>"


class Politeness:
    """The heap of origins by next-allowed time, and the host-name and IP slots."""

    def __init__(self, *, delay: float, host_concurrency: int, ip_concurrency: int, ip_delay: float,
                 backoff_max: float = 600.0, tokens: IpTokens | None = None) -> None:
        self.delay = delay  # per host name, raised by an origin's Crawl-delay (Origin.delay)
        self.backoff_max = backoff_max  # cap of a slowed-down host's delay
        self.host_concurrency = host_concurrency
        self.ip_concurrency = ip_concurrency
        self.ip_delay = ip_delay
        self._heap: list[tuple[float, int, int, Origin]] = []
        self._tie = itertools.count()
        self.ips: dict[str, Slot] = {}
        self.names: dict[str, Slot] = {}
        self.touched: set[Slot] = set()  # slots changed since the last commit (take_touched)
        self.tokens = tokens  # the IP tokens, with partitions (iptoken.py); None: this urlserver is alone

    def __len__(self) -> int:
        return len(self._heap)

    def schedule(self, origin: Origin, when: float) -> None:
        """Put `origin` in the heap at `when` (replacing any earlier entry)."""
        origin.version += 1
        origin.in_heap = True
        origin.waiting = Waiting.NONE
        heapq.heappush(self._heap, (when, next(self._tie), origin.version, origin))

    def unschedule(self, origin: Origin) -> None:
        origin.version += 1
        origin.in_heap = False

    def pop_due(self, now: float) -> Origin | None:
        """The origin whose time has come first, or None."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, _, version, origin = heapq.heappop(heap)
            if version == origin.version and origin.in_heap:
                origin.in_heap = False
                return origin
        return None

    def next_time(self) -> float | None:
        """When the earliest live entry comes due (None: heap empty)."""
        heap = self._heap
        while heap and (heap[0][2] != heap[0][3].version or not heap[0][3].in_heap):
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def ip_slot(self, ip: str) -> Slot:
        slot = self.ips.get(ip)
        if slot is None:
            slot = self.ips[ip] = Slot(ip)
        return slot

    def name_slot(self, origin: Origin) -> Slot:
        slot = origin.slot
        if slot is None:
            slot = self.names.get(origin.name)
            if slot is None:
                slot = self.names[origin.name] = Slot(origin.name)
            origin.slot = slot
        return slot

    def park(self, origin: Origin) -> None:
        """Hold `origin` until one of its name's transactions ends (finished() returns it)."""
        self.name_slot(origin).parked.append(origin)
        origin.waiting = Waiting.HOST

    def blocked_until(self, origin: Origin, now: float) -> float | None:
        """None if `origin` may be served now; else when to look again
        (float('inf') means parked until a transaction ends)."""
        slot = self.name_slot(origin)
        if slot.inflight >= self.host_concurrency:
            self.park(origin)
            return float("inf")
        if slot.next_ok > now:
            return slot.next_ok
        slot = self.ip_slot(origin.ip)
        if slot.inflight >= self.ip_concurrency:
            slot.parked.append(origin)
            origin.waiting = Waiting.IP
            return float("inf")
        if slot.next_ok > now:
            return slot.next_ok
        if self.tokens is not None:
            wait = self.tokens.may_start(origin.ip, now)
            if wait == float("inf"):  # the token is asked for (or on its way back): woken by the grant
                slot.parked.append(origin)
                origin.waiting = Waiting.IP_TOKEN
            return wait
        return None

    def may_chain(self, ip: str) -> bool:
        """Whether a chain (chains.py) may be extended on `ip`: not while its
        token is recalled, or the chain would keep it from the next partition."""
        return self.tokens is None or self.tokens.holding(ip) is Holding.HELD

    def token_received(self, peer: int, message, now: float) -> list[Origin]:
        """A token message from partition `peer`; the hosts it lets go on, to reschedule."""
        self.tokens.received(peer, message, now)
        return self.token_granted()

    def token_granted(self) -> list[Origin]:
        """The hosts parked on addresses whose token just came, to reschedule."""
        woken: list[Origin] = []
        for ip in self.tokens.take_granted():
            slot = self.ips.get(ip)
            if slot is not None:
                woken += slot.parked
                slot.parked = []
        return woken

    def started(self, origin: Origin, now: float) -> None:
        """A transaction for `origin` was handed out at `now`."""
        slot = self.name_slot(origin)
        slot.inflight += 1
        slot.gap = max(origin.delay, self.delay, slot.slow, slot.floor)
        slot.next_ok = now + slot.gap
        if slot.gap:  # no delay, nothing to keep across a restart (and no write per handout)
            self.touched.add(slot)
        slot = self.ip_slot(origin.ip)
        slot.inflight += 1
        slot.next_ok = now + self.ip_delay
        if self.ip_delay:
            slot.gap = self.ip_delay
            self.touched.add(slot)
        if self.tokens is not None:
            self.tokens.started(origin.ip, now)

    def finished(self, origin: Origin, ip: str, now: float) -> list[Origin]:
        """A transaction ended at `now`; the hosts parked on its name or IP, to reschedule.

        The delays count again from the end of the transaction (as Heritrix
        does): a slow response, or a request that reached the server late,
        never shortens the gap a server sees between two requests.
        """
        name = self.name_slot(origin)
        name.inflight -= 1
        name.next_ok = max(name.next_ok, now + max(origin.delay, self.delay, name.slow, name.floor))
        if name.gap:
            self.touched.add(name)
        parked, name.parked = name.parked, []
        if self.tokens is not None:
            self.tokens.ended(ip, now)  # a recalled token goes back once the last one ended
            parked += self.token_granted()  # a partition that is its address's owner grants itself
        slot = self.ips.get(ip)
        if slot is None:
            return parked
        slot.inflight -= 1
        slot.next_ok = max(slot.next_ok, now + self.ip_delay)
        if self.ip_delay:
            self.touched.add(slot)
        parked += slot.parked
        slot.parked = []
        return parked

    def delay_learned(self, origin: Origin, now: float) -> None:
        """`origin.delay` was just set from its robots.txt (Crawl-delay), whose
        transaction ended at `now` under the old delay: the host's next
        request waits the new one from then (RFC 9309 leaves Crawl-delay to
        crawlers; it counts between any two requests, robots.txt included)."""
        name = self.name_slot(origin)
        name.next_ok = max(name.next_ok, now + max(origin.delay, self.delay, name.slow, name.floor))

    def set_floor(self, name: str, seconds: float) -> None:
        """The operator's delay for host name `name` (0: none): the gap
        between two of its requests is at least this, from its next request
        on; --delay, Crawl-delay and a back-off still apply when longer."""
        slot = self.names.get(name)
        if slot is None:
            slot = self.names[name] = Slot(name)
        slot.floor = seconds

    def slow_down(self, origin: Origin, now: float, retry_after: float | None) -> None:
        """`origin` answered 429 or 5xx: double its name's delay (to the cap), honour Retry-After."""
        slot = self.name_slot(origin)
        base = max(origin.delay, self.delay, slot.slow, slot.floor, SLOWDOWN_FLOOR / 2)
        slot.slow = min(self.backoff_max, 2 * base)
        hold = slot.slow if retry_after is None else max(slot.slow, min(retry_after, self.backoff_max))
        slot.next_ok = max(slot.next_ok, now + hold)
        slot.gap = max(slot.gap, hold)  # a restart honours the Retry-After too
        self.touched.add(slot)

    def recover(self, origin: Origin) -> None:
        """`origin` answered normally: halve its name's slow-down, until it is gone."""
        slot = self.name_slot(origin)
        if slot.slow:
            slot.slow /= 2
            if slot.slow <= max(origin.delay, self.delay):
                slot.slow = 0.0

    # -- across restarts (see the rule at the top) -------------------------------------

    def take_touched(self) -> list[tuple[bool, str, float, float, bool]]:
        """The slots changed since the last call, as db.Db.put_pace's arguments
        (is_ip, key, next_ok, delay, in_flight); the commit writes them."""
        ips = self.ips
        out = [(slot.key in ips and ips[slot.key] is slot, slot.key, slot.next_ok, slot.gap, slot.inflight > 0)
               for slot in self.touched]
        self.touched.clear()
        return out

    def restore(self, saved, now: float) -> int:
        """Seed the slots from `saved` (db.Db.paces_saved) at a start at `now`;
        the number of slots that still hold their name or address."""
        held = 0
        for is_ip, key, next_ok, gap, in_flight in saved:
            if is_ip and not self.ip_delay:
                continue  # no IP delay this run: an IP slot only counts transactions
            base = next_ok - gap  # the last handout, or the end of the last transaction
            gap = max(gap, self.ip_delay if is_ip else self.delay)  # this run's delay may be longer
            next_ok = base + gap
            # in flight: its end is unknown, the restart is the earliest safe bound; and never
            # more than one delay from now (a wall clock stepped back must not hold a host for long)
            next_ok = now + gap if in_flight else min(next_ok, now + gap)
            if next_ok <= now:
                continue  # its turn has come: the slot is made when first needed
            slot = Slot(key)
            slot.next_ok, slot.gap = next_ok, gap
            (self.ips if is_ip else self.names)[key] = slot
            held += 1
        return held
