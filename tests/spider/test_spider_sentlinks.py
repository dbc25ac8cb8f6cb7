# Links a DONE leaves out (docs/protocol.txt 5.5.1): only those of DONEs the
# urlserver named in COMMITTED on the same connection. The table alone
# (spider/sentlinks.py); a worker that uses it is in test_spider_exchange.py.
from __future__ import annotations

from wreck.spider.sentlinks import SentLinks

MENU = ("http://a.example/", "http://a.example/about", "http://a.example/news")


def test_links_of_a_committed_done_are_left_out_and_counted():
    sent = SentLinks()
    assert sent.leave_out(MENU) == (MENU, 0)
    sent.sent(1, MENU)
    sent.committed((1,))
    page = (*MENU[:2], "http://a.example/p/9")
    assert sent.leave_out(page) == (("http://a.example/p/9",), 2)
    assert sent.left_out == 2


def test_links_of_a_done_never_named_in_committed_are_always_sent_again():
    sent = SentLinks()
    sent.sent(1, MENU)  # ignored by the urlserver, or lost with its transaction
    sent.sent(2, ("http://a.example/p/2",))
    sent.committed((2, 77))  # another DONE, and an id that is not ours
    assert sent.leave_out(MENU) == (MENU, 0)
    assert "http://a.example/p/2" in sent


def test_known_links_and_links_awaiting_committed_stay_bounded():
    sent = SentLinks(limit=4, pending_limit=5)
    for i in range(10):
        sent.sent(i, (f"http://a.example/{i}a", f"http://a.example/{i}b"))
    assert sent.pending_count <= 5 and list(sent.pending) == [8, 9]  # the oldest forgotten first
    sent.committed(tuple(range(10)))  # 0-7 forgotten: their links are sent again, never wrongly left out
    assert sent.leave_out(("http://a.example/0a",)) == (("http://a.example/0a",), 0)
    for i in range(10, 20):
        sent.sent(i, (f"http://a.example/{i}",))
        sent.committed((i,))
    assert len(sent) <= 2 * 4
    assert "http://a.example/19" in sent and "http://a.example/10" not in sent
