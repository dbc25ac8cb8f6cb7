"""A page's outlinks admitted together (Frontier.discover_links, column-wise:
urlserver/pagelinks.py) leave the frontier exactly as admitting each link
alone (Frontier.discover) would: the same records, the same reasons, the
same queues in the same order, whichever rule applies to which link."""

from __future__ import annotations

from wreck.urlserver import db as d
from wreck.urlserver.frontier import Frontier

from tests.urlserver_helpers import crawl_engine


def _pages() -> list[list[str]]:
    """A page whose every link some rule of one look admits or refuses per
    host, then one with links that rules on their text refuse."""
    links = [f"http://a.test/p/{k}?x=1" for k in range(40)]  # a known host, in normal form
    links += [f"http://b.test/q/{k}" for k in range(6)]  # a known host with 4 pages of budget left
    links += [f"http://new{k}.test/" for k in range(5)]  # hosts not known yet
    links += ["http://a.test/p/3?x=1", "HTTP://A.test/p/99", "/relative/1", "javascript:void(0)", "http://c.test/"]
    links += [f"http://a.test/p/{k}?x=1" for k in range(5)]  # again, on the same page
    refused = ["http://a.test/" + "x" * 120, "http://a.test/t/t/t/t/t/t/x", "http://a.test/ok", "http://c.test/out"]
    return [links, refused]


def _state(c) -> tuple[dict, dict]:
    fr: Frontier = c.frontier
    c.commit()
    with fr.db.begin() as txn:
        records = {fp: d.UrlRecord.unpack(raw).as_dict() for fp, raw in txn.cursor(db=fr.db.urls)}
        queues: dict[str, list[str]] = {}
        for origin, host in fr.origins.items():
            queues[origin] = [d.unpack_entry(txn.get(d.QKEY.pack(host.id, seq), db=fr.db.queue))[3]
                              for seq in range(host.head, host.tail)]
    return records, queues


def _crawl(path, scope):
    c = crawl_engine(path, scope=scope, max_pages=5, max_url_len=100)
    c.add_seed("http://a.test/")
    c.add_seed("http://b.test/")
    c.commit()
    c.frontier.max_pages = 45  # a.test: room for its links; b.test's budget is set below
    c.frontier.origins["http://b.test"].admitted = 41  # 4 of b.test's 6 links fit
    return c


def test_a_page_of_links_admits_as_each_link_alone_would(tmp_path):
    for scope in ("any", "host"):
        together = _crawl(tmp_path / f"together-{scope}", scope)
        queued = sum(together.frontier.discover_links(page, depth=1, base="http://a.test/dir/") for page in _pages())
        alone = _crawl(tmp_path / f"alone-{scope}", scope)
        outcomes = [alone.frontier.discover(link, depth=1, base="http://a.test/dir/")
                    for page in _pages() for link in page]
        assert queued == outcomes.count("queued")
        assert _state(together) == _state(alone)
        records, _ = _state(together)
        reasons = {r["reason"] for r in records.values()}
        assert {"url too long", "host page budget exhausted", "repeated path segments (trap)"} <= reasons
        assert ("out of scope (host)" in reasons) == (scope == "host")
        together.close()
        alone.close()


def test_a_page_offered_again_or_half_new_queues_only_its_new_urls(tmp_path):
    c = crawl_engine(tmp_path / "c", scope="any", max_pages=1000)
    c.add_seed("http://a.test/")
    c.commit()
    fr: Frontier = c.frontier
    first = tuple(f"http://a.test/p/{k}?x=1" for k in range(10))  # a DONE's outlinks are a tuple
    assert fr.discover_links(first, depth=1) == 10
    assert fr.discover_links(first, depth=1) == 0  # recorded by the open transaction
    c.commit()
    assert fr.discover_links(first, depth=1) == 0  # recorded by a committed one
    fresh = tuple(f"http://a.test/p/{k}?x=1" for k in range(10, 15))
    assert fr.discover_links(first[5:] + fresh, depth=1) == 5  # half recorded lately, half new
    assert fr.discover_links(fresh[:2] + first[:1], depth=1) == 0  # one pending, one committed
    _, queues = _state(c)
    assert queues["http://a.test"] == ["http://a.test/", *first, *fresh]
    c.close()
