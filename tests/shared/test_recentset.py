"""wreck/recentset.py: the strings added lately are kept, and no more than
two generations of them (the urlserver's RecentLinks and the spider's
SentLinks are both one)."""

from __future__ import annotations

from wreck.recentset import RecentSet
from wreck.spider.sentlinks import SentLinks
from wreck.urlserver.seen import RecentLinks


def test_the_last_strings_added_are_kept_and_memory_stays_bounded():
    recent = RecentSet(limit=100)
    for i in range(10_000):
        recent.update((f"http://a.example/{i}",))
        assert len(recent) <= 2 * 100
        # the last `limit` added are always there, whatever the turns of generations
        assert all(f"http://a.example/{k}" in recent for k in range(max(0, i - 99), i + 1))
    assert "http://a.example/0" not in recent  # an old one is forgotten


def test_a_string_added_again_lives_on_in_the_new_generation():
    recent = RecentSet(limit=3)
    recent.update(("menu", "a", "b"))  # a full generation: it becomes the last one
    recent.update(("menu", "c"))
    recent.update(("d",))  # full again: ("a", "b") forgotten, "menu" kept
    assert "menu" in recent and "c" in recent and "d" in recent
    assert "a" not in recent and "b" not in recent


def test_both_ends_of_a_done_keep_their_links_in_one_recent_set():
    recent_links, sent_links = RecentLinks(limit=2), SentLinks(limit=2)
    assert isinstance(recent_links, RecentSet) and isinstance(sent_links, RecentSet)
    recent_links.pending.update(("x", "y", "z"))
    recent_links.committed()
    sent_links.sent(1, ("x", "y", "z"))
    sent_links.committed((1,))
    for each in (recent_links, sent_links):
        assert len(each) <= 2 * 2 and "z" in each
