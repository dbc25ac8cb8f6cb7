# The links a DONE may leave out (docs/protocol.txt 5.5.1). Most of a page's
# outlinks are its site's menus, sent again with every page of the host and
# ended by the urlserver at its RecentLinks: their encoding, bytes and
# decoding are work for nothing. A session notes the links of each DONE it
# sends (sent()); when the urlserver's COMMITTED names that DONE, its commit
# is durable and they become known (committed()); later DONEs on the same
# connection leave known links out and say how many (leave_out(), known=N).
# Nothing is known before COMMITTED, because a DONE can be ignored (its claim
# expired: ignored_done) or lost with the urlserver's open transaction at a
# kill -9, and its links with it. One SentLinks per connection: the next
# connection starts empty, as it may reach a urlserver restarted from an
# older commit. Both tables are bounded: the known links are a RecentSet
# (wreck/recentset.py, two generations of KNOWN_LINKS), the links awaiting
# COMMITTED at most UNCOMMITTED_LINKS.
"""SentLinks: links committed by the urlserver on this connection, left out of later DONEs."""

from __future__ import annotations

from collections import OrderedDict

from wreck.recentset import RecentSet

# Known links per generation; two generations are kept, so at most about
# twice this. A host's menus are tens to a few hundred links and a worker's
# window spans up to a few hundred hosts at once: 50,000 holds them all, at
# about 100 octets a link (a str and its set slots), 10 MB per worker at most.
KNOWN_LINKS = 50_000
# Links of DONEs sent and not yet named by COMMITTED. The urlserver names a
# DONE within a commit (milliseconds); one that never answers (ignored DONEs,
# a urlserver that does not know the capability) costs no more than this:
# the oldest DONEs' links are forgotten first, which only means sending them
# again later.
UNCOMMITTED_LINKS = 100_000


class SentLinks(RecentSet):
    """Per connection: which links a DONE may leave out (docs/protocol.txt 5.5.1)."""

    __slots__ = ("pending_limit", "pending", "pending_count", "left_out")

    def __init__(self, limit: int = KNOWN_LINKS, pending_limit: int = UNCOMMITTED_LINKS) -> None:
        super().__init__(limit)
        self.pending_limit = pending_limit
        self.pending: OrderedDict[int, tuple[str, ...]] = OrderedDict()  # trans_id -> links sent
        self.pending_count = 0
        self.left_out = 0  # links left out of DONEs so far, for the session's figures

    def leave_out(self, links: tuple[str, ...]) -> tuple[tuple[str, ...], int]:
        """The links to send of a page's `links`, and how many were left out as known."""
        known = self.known
        if not known:
            return links, 0
        kept = tuple([link for link in links if link not in known])
        left_out = len(links) - len(kept)
        self.left_out += left_out
        return kept, left_out

    def sent(self, trans_id: int, links: tuple[str, ...]) -> None:
        """The DONE of `trans_id` went out carrying `links`: known once COMMITTED names it."""
        if not links:
            return
        self.pending[trans_id] = links
        self.pending_count += len(links)
        while self.pending_count > self.pending_limit:
            self.pending_count -= len(self.pending.popitem(last=False)[1])

    def committed(self, trans_ids: tuple[int, ...]) -> None:
        """COMMITTED named these DONEs: their links are recorded for good. Ids
        not pending (no links, forgotten, or not ours) are ignored."""
        pending = self.pending
        for trans_id in trans_ids:
            links = pending.pop(trans_id, None)
            if links is None:
                continue
            self.pending_count -= len(links)
            self.update(links)
