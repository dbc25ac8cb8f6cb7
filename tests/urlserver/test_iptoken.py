"""IP tokens across partitions (urlserver/iptoken.py), message by message.

Partitions are IpTokens objects joined by a fake link that carries the
messages each emits through their wire form (protocol/iptokens.py), so every
exchange is also an encode/parse round trip. Time is passed in.
"""

from __future__ import annotations

import pytest

from wreck.protocol.errors import RemoteProtocolError
from wreck.protocol.iptokens import IpGrant, IpRecall, IpReturn, IpWant, encode_token, parse_token
from wreck.urlserver.iptoken import GRANT_TURN_S, Holding, IpTokens, TokenError, owner_of
from wreck.urlserver.politeness import Origin, Politeness, Waiting

IP_DELAY = 1.0
LEASE = 10.0


def ip_owned_by(owner: int, partitions: int = 3, *, skip: int = 0) -> str:
    """An address whose token `owner` arbitrates."""
    found = [f"192.0.2.{i}" for i in range(1, 255) if owner_of(f"192.0.2.{i}", partitions) == owner]
    return found[skip]


class Net:
    """`count` partitions and the links between them; deliver() moves every message."""

    def __init__(self, count: int = 3, *, now: float = 100.0) -> None:
        self.parts = [IpTokens(me=i, partitions=count, ip_delay=IP_DELAY, lease=LEASE, now=now)
                      for i in range(count)]
        for p in self.parts:
            for q in range(count):
                p.found_owner(q, now)
        self.wire: list[tuple[int, int, bytes]] = []  # (from, to, line), for the assertions

    def deliver(self, now: float, *, drop_to: int | None = None) -> list[tuple[int, int, bytes]]:
        sent = []
        while True:
            batch = [(p.me, to, encode_token(m)) for p in self.parts for to, m in p.take_messages()]
            if not batch:
                return sent
            for src, dst, line in batch:
                sent.append((src, dst, line))
                if dst != drop_to:
                    self.parts[dst].received(src, parse_token(line.rstrip(b"\n")), now)


def granted_to_1_then_wanted_by_2():
    """Partition 1 holds the token of an address partition 0 owns (unused); partition 2 asks for it."""
    net = Net()
    a, b, ip = net.parts[1], net.parts[2], ip_owned_by(0)
    a.may_start(ip, 100.0)
    net.deliver(100.0)
    b.may_start(ip, 100.0)
    net.deliver(100.0)
    return net, a, b, ip


def test_an_address_used_by_one_partition_costs_one_round_trip_ever():
    net = Net()
    a, ip = net.parts[1], ip_owned_by(0)
    assert a.may_start(ip, 100.0) == float("inf")  # asked for it
    assert net.deliver(100.0) == [(1, 0, f"IPWANT {ip}\n".encode()), (0, 1, f"IPGRANT {ip} 0\n".encode())]
    assert a.take_granted() == [ip]
    for t in range(100, 200):  # a hundred transfers later, not one more message
        assert a.may_start(ip, float(t)) is None
        a.started(ip, float(t))
        a.ended(ip, t + 0.5)
    assert net.deliver(200.0) == []
    assert a.grants_received == 1


def test_the_owner_grants_its_own_addresses_to_itself_without_a_message():
    net = Net()
    ip = ip_owned_by(2)
    assert net.parts[2].may_start(ip, 100.0) is None
    assert net.deliver(100.0) == []


def test_a_recall_waits_for_transfers_in_flight_and_the_next_holder_starts_after_the_ip_delay():
    net = Net()
    a, b, ip = net.parts[1], net.parts[2], ip_owned_by(0)
    a.may_start(ip, 100.0)
    net.deliver(100.0)
    a.started(ip, 100.0)
    a.started(ip, 100.2)  # two transfers to the address in flight
    assert b.may_start(ip, 101.0) == float("inf")
    assert net.deliver(101.0) == [(2, 0, f"IPWANT {ip}\n".encode()), (0, 1, f"IPRECALL {ip}\n".encode())]
    assert a.holding(ip) is Holding.RECALLED
    assert a.may_start(ip, 101.5) == float("inf")  # recalled: nothing new goes to the address
    a.ended(ip, 102.0)
    assert net.deliver(102.0) == []  # one transfer still runs: the token stays
    a.ended(ip, 103.0)  # the last one ends: due again at 104.0
    assert net.deliver(103.0) == [
        (1, 0, f"IPRETURN {ip} 1000\n".encode()),
        (1, 0, f"IPWANT {ip}\n".encode()),  # partition 1 asked again while recalled (above)
        (0, 2, f"IPGRANT {ip} 1000\n".encode()),
        (0, 2, f"IPRECALL {ip}\n".encode()),  # so 2 gets one turn
    ]
    assert b.take_granted() == [ip]
    assert b.may_start(ip, 103.5) == 104.0  # no earlier than the last end + ip-delay
    assert b.may_start(ip, 104.0) is None


def test_a_grant_recalled_before_it_was_used_is_good_for_one_turn_then_goes_to_the_next():
    net, a, b, ip = granted_to_1_then_wanted_by_2()
    assert a.holding(ip) is Holding.RECALLED  # recalled before partition 1 handed anything out
    assert a.may_start(ip, 100.1) is None  # its one turn
    a.started(ip, 100.1)
    assert a.may_start(ip, 100.2) == float("inf")  # one only; it wants more
    a.ended(ip, 100.6)
    net.deliver(100.6)
    assert b.holding(ip) is Holding.RECALLED and a.holding(ip) is Holding.WANTED
    assert b.may_start(ip, 101.0) == 101.6  # partition 1's end + ip-delay
    b.started(ip, 101.6)
    b.ended(ip, 102.0)
    net.deliver(102.0)
    assert a.holding(ip) is Holding.HELD and b.holding(ip) is Holding.ABSENT
    assert a.may_start(ip, 102.5) == 103.0


def test_an_unused_recalled_grant_goes_back_when_its_turn_is_over():
    net, a, b, ip = granted_to_1_then_wanted_by_2()
    assert a.next_deadline() == 100.0 + GRANT_TURN_S
    a.tick(100.0 + GRANT_TURN_S - 0.1)
    assert net.deliver(101.9) == []
    a.tick(100.0 + GRANT_TURN_S)
    net.deliver(100.0 + GRANT_TURN_S)
    assert b.holding(ip) is Holding.HELD and a.holding(ip) is Holding.ABSENT


def test_two_partitions_wanting_one_address_alternate_and_both_fetch():
    net = Net()
    a, b, ip = net.parts[1], net.parts[2], ip_owned_by(0)
    starts: list[tuple[float, int]] = []
    now = 100.0
    while now < 140.0:
        for p in (a, b):
            if p.may_start(ip, now) is None and not p.holds[ip].inflight:
                p.started(ip, now)
                starts.append((now, p.me))
            elif p.holds.get(ip) and p.holds[ip].inflight:
                p.ended(ip, now)
        for p in (a, b):
            p.tick(now)
        net.deliver(now)
        now += 0.25
    assert {who for _, who in starts} == {1, 2}
    gaps = [t2 - t1 for (t1, _), (t2, _) in zip(starts, starts[1:])]
    assert min(gaps) >= IP_DELAY  # never two requests to the address closer than the ip-delay


def test_a_dead_holder_gives_the_token_back_after_the_lease():
    net = Net()
    a, b, ip = net.parts[1], net.parts[2], ip_owned_by(0)
    a.may_start(ip, 100.0)
    net.deliver(100.0)
    a.started(ip, 100.0)  # then partition 1 is killed -9 with the transfer in flight
    b.may_start(ip, 101.0)
    net.deliver(101.0, drop_to=1)
    assert b.holding(ip) is Holding.WANTED
    owner = net.parts[0]
    owner.lost_holder(1, 105.0)
    assert net.deliver(105.0) == []  # partition 1 may still be fetching: nothing before the lease
    assert owner.next_deadline() == 105.0 + LEASE
    owner.tick(105.0 + LEASE - 0.01)
    assert net.deliver(114.99) == []
    owner.tick(105.0 + LEASE)
    assert net.deliver(105.0 + LEASE) == [(0, 2, f"IPGRANT {ip} 0\n".encode())]
    assert b.may_start(ip, 105.0 + LEASE) is None


def test_a_holder_cut_from_the_owner_stops_at_once_and_returns_the_token_when_its_transfers_ended():
    net = Net()
    a, b, owner, ip = net.parts[1], net.parts[2], net.parts[0], ip_owned_by(0)
    a.may_start(ip, 100.0)
    net.deliver(100.0)
    a.started(ip, 100.0)
    a.lost_owner(0, 101.0)  # the connection partition 1 dialled to 0 breaks (both ends see it)
    owner.lost_holder(1, 101.0)
    assert a.may_start(ip, 101.0) == float("inf")  # lost with the connection: nothing more to it
    b.may_start(ip, 101.0)
    assert net.deliver(101.0) == [(2, 0, f"IPWANT {ip}\n".encode())]  # queued behind the lost holder
    a.found_owner(0, 102.0)  # dialled again; its transfer still runs
    assert net.deliver(102.0) == [(1, 0, f"IPWANT {ip}\n".encode())]
    a.ended(ip, 103.0)  # now it gives the token back, due at 104.0: no lease
    assert net.deliver(103.0) == [(1, 0, f"IPRETURN {ip} 1000\n".encode()),
                                  (0, 2, f"IPGRANT {ip} 1000\n".encode()),
                                  (0, 2, f"IPRECALL {ip}\n".encode())]
    assert b.may_start(ip, 103.5) == 104.0


def test_a_restarted_owner_knows_which_tokens_were_out_and_no_other_waits():
    net = Net()
    owner, a, b = net.parts
    lent, free = ip_owned_by(0), ip_owned_by(0, skip=1)
    a.may_start(lent, 100.0)
    net.deliver(100.0)
    a.started(lent, 100.0)
    assert owner.take_lent() == [(lent, 1)]  # kept with the commit, before the grant is sent
    # the owner is killed -9 and restarts with what it kept
    restarted = IpTokens(me=0, partitions=3, ip_delay=IP_DELAY, lease=LEASE, now=102.0, lent={lent: 1})
    net.parts[0] = restarted
    for p in (a, b):
        p.lost_owner(0, 102.0)
        p.found_owner(0, 102.5)
    assert b.may_start(free, 103.0) == float("inf")
    assert net.deliver(103.0) == [(2, 0, f"IPWANT {free}\n".encode()),
                                  (0, 2, f"IPGRANT {free} 0\n".encode())]  # nobody else had it: no wait
    b.may_start(lent, 103.0)
    assert net.deliver(103.0) == [(2, 0, f"IPWANT {lent}\n".encode())]  # partition 1 still fetches from it
    a.ended(lent, 103.2)
    assert net.deliver(103.2) == [(1, 0, f"IPRETURN {lent} 1000\n".encode()),
                                  (0, 2, f"IPGRANT {lent} 1000\n".encode())]
    assert sorted(restarted.take_lent()) == sorted([(free, 2), (lent, 2)])


def test_a_grant_not_asked_for_is_given_straight_back():
    net = Net()
    a, ip = net.parts[1], ip_owned_by(0)
    a.received(0, IpGrant(ip, 1500), 100.0)
    assert a.take_messages() == [(0, IpReturn(ip, 1500))]  # its wait counts for the next holder
    assert a.holding(ip) is Holding.ABSENT


def test_a_want_sent_to_a_partition_that_does_not_own_the_address_is_refused():
    net = Net()
    ip = ip_owned_by(0)
    with pytest.raises(TokenError, match="does not own it"):
        net.parts[1].received(2, IpWant(ip), 100.0)


@pytest.mark.parametrize("line", [b"IPWANT 192.0.2.010", b"IPGRANT 192.0.2.1", b"IPGRANT 192.0.2.1 01",
                                  b"IPRETURN 192.0.2.1 4294967296", b"IPWANT", b"IPWANTS 192.0.2.1",
                                  b"IPRECALL 192.0.2.1 5", b"IPWANT " + b"1" * 70])
def test_malformed_token_lines_are_protocol_errors(line):
    with pytest.raises(RemoteProtocolError):
        parse_token(line)


def test_token_lines_round_trip():
    for message in (IpWant("2001:db8::1"), IpGrant("192.0.2.7", 1500), IpRecall("192.0.2.7"),
                    IpReturn("2001:db8::1", 4294967295)):
        line = encode_token(message)
        assert line.endswith(b"\n") and parse_token(line[:-1]) == message


def test_the_owner_of_an_address_is_stable_and_spread():
    owners = [owner_of(f"10.0.{i // 256}.{i % 256}", 4) for i in range(4000)]
    assert owners == [owner_of(f"10.0.{i // 256}.{i % 256}", 4) for i in range(4000)]
    assert all(800 < owners.count(k) < 1200 for k in range(4))
    # adding a partition moves only the addresses that go to the new one
    moved = [i for i in range(4000) if owner_of(f"10.0.{i // 256}.{i % 256}", 5) != owners[i]]
    assert all(owner_of(f"10.0.{i // 256}.{i % 256}", 5) == 4 for i in moved)


# -- the politeness gate (politeness.py) with tokens --------------------------------------


def _origin(name: str, ip: str) -> Origin:
    origin = Origin(f"http://{name}", name, 1, 0, 1, 0)
    origin.ip = ip
    return origin


def test_hosts_of_one_address_in_two_partitions_are_never_fetched_closer_than_the_ip_delay():
    """Partition 0 owns the address; a.test sits in partition 1, b.test in partition 2,
    each always with work: the pair of gates serves both, one at a time, IP_DELAY apart."""
    ip = ip_owned_by(0)
    net = Net()
    pols = {me: Politeness(delay=0.0, host_concurrency=1, ip_concurrency=4, ip_delay=IP_DELAY,
                           tokens=net.parts[me]) for me in (1, 2)}
    hosts = {1: _origin("a.test", ip), 2: _origin("b.test", ip)}
    running: dict[int, float] = {}  # partition -> when its transfer ends
    starts: list[tuple[float, int]] = []
    for me in (1, 2):
        pols[me].schedule(hosts[me], 100.0)
    now = 100.0
    while now < 130.0:
        for me, pol in pols.items():
            if running.get(me, float("inf")) <= now:  # a transfer of 0.3 s ends
                del running[me]
                for parked in pol.finished(hosts[me], ip, now):
                    pol.schedule(parked, now)
                pol.schedule(hosts[me], now)
            host = pol.pop_due(now)
            if host is None:
                continue
            blocked = pol.blocked_until(host, now)
            if blocked is None:
                pol.started(host, now)
                starts.append((now, me))
                running[me] = now + 0.3
            elif blocked != float("inf"):
                pol.schedule(host, blocked)
        for p in net.parts:
            p.tick(now)
        for src, dst, line in net.deliver(now):
            if dst in pols:
                for woken in pols[dst].token_granted():
                    pols[dst].schedule(woken, now)
        now = round(now + 0.05, 2)
    assert {me for _, me in starts} == {1, 2}
    assert len(starts) >= 20
    gaps = [round(t2 - t1, 2) for (t1, _), (t2, _) in zip(starts, starts[1:])]
    assert min(gaps) >= IP_DELAY + 0.3  # each starts after the other's end + the IP delay


def test_a_recalled_token_stops_chains_on_its_address():
    net = Net()
    ip = ip_owned_by(0)
    pol = Politeness(delay=0.0, host_concurrency=1, ip_concurrency=4, ip_delay=0.0, tokens=net.parts[1])
    host = _origin("a.test", ip)
    assert pol.blocked_until(host, 100.0) == float("inf") and host.waiting is Waiting.IP_TOKEN
    net.deliver(100.0)
    assert pol.token_granted() == [host]
    assert pol.blocked_until(host, 100.0) is None and pol.may_chain(ip)
    pol.started(host, 100.0)
    net.parts[2].may_start(ip, 100.1)
    net.deliver(100.1)
    assert not pol.may_chain(ip)  # recalled: the chain ends with its transfer, the token goes back
    pol.finished(host, ip, 100.2)
    net.deliver(100.2)
    assert net.parts[2].holding(ip) is Holding.HELD


# -- two engines (crawl.py), one address, hosts in both partitions -----------------------


def _partition_engine(tmp_path, me: int, seed: str):
    from wreck.urlserver.crawl import Crawl
    from wreck.urlserver.settings import Settings

    settings = Settings(data=str(tmp_path / f"p{me}"), delay=0.0, ip_delay=IP_DELAY, allow_net=("127.0.0.0/8",),
                        sync=False, partitions=2, partition=me, peers=("127.0.0.1:7001", "127.0.0.1:7011"),
                        crawl_id="5f0c2e8a91d34b7e8c6a0f1d2b3e4c5a", timeout_req=5.0)
    crawl = Crawl.open(settings, clock=lambda: 100.0)
    crawl.add_seed(seed)
    crawl.token_link(1 - me, dialled=True, up=True, now=100.0)
    return crawl


def test_two_partitions_crawling_hosts_on_one_address_keep_the_ip_delay_between_them(tmp_path):
    from wreck.protocol import Done, Specific, Status
    from wreck.urlserver.dns import Resolution
    from wreck.urlserver.partition import partition_of

    hosts = {0: "site0.test", 1: "site3.test"}  # one in each partition (partition.py)
    assert [partition_of(hosts[me], 2) for me in (0, 1)] == [0, 1]
    engines = {me: _partition_engine(tmp_path, me, f"http://{hosts[me]}/0") for me in (0, 1)}
    transfers: list[tuple[float, int, object]] = []  # (end, partition, assignment)
    starts: list[tuple[float, int, str]] = []
    now = 100.0
    while now < 160.0:
        for end, me, a in [t for t in transfers if t[0] <= now]:
            transfers.remove((end, me, a))
            if a.url.endswith("/robots.txt"):
                done = Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
            else:
                n = int(a.url.rsplit("/", 1)[1])
                links = (f"http://{hosts[me]}/{n + 1}",) if n < 5 else ()
                done = Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=links)
            engines[me].done("s", done, now)
        for me, crawl in engines.items():
            crawl.expire(now)
            a = crawl.take("s", now)
            for h in crawl.dns_requests():
                crawl.dns_result(h, Resolution("127.0.0.9", "", 1e12), now)
            a = a or crawl.take("s", now)
            if a is not None:
                starts.append((now, me, a.url))
                transfers.append((round(now + 0.2, 2), me, a))
            crawl.commit()
        for me, crawl in engines.items():  # the peer link, instantly
            for to, message in crawl.token_messages():
                engines[to].token_received(me, message, now)
        now = round(now + 0.05, 2)
    fetched = {url for _, _, url in starts}
    for me in (0, 1):
        assert {f"http://{hosts[me]}/{n}" for n in range(6)} <= fetched
    assert {me for _, me, _ in starts} == {0, 1}
    gaps = [round(t2 - t1, 2) for (t1, _, _), (t2, _, _) in zip(starts, starts[1:])]
    assert min(gaps) >= IP_DELAY + 0.2, starts  # the last end + the IP delay, across partitions
    for crawl in engines.values():
        crawl.close()


def test_an_address_token_is_arbitrated_by_the_partition_that_would_own_it_as_a_host():
    from wreck.urlserver.partition import partition_of

    for i in range(50):
        assert owner_of(f"192.0.2.{i}", 4) == partition_of(f"192.0.2.{i}", 4)
