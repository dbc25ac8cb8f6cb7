# Which URL killed the spider? --max-expiries ends a URL whose claims keep
# dying with their spider (a page that crashes workers must not loop for
# ever), but a spider that dies holding 200 claims says nothing about which
# of them, if any, killed it: charging all 200 ends innocent pages after a
# few unrelated crashes or kill -9s. So a death charges a URL only when the
# blame is certain: the spider held that one claim, or that one suspect.
# Every other claim it held becomes a suspect, and a spider is handed at
# most one suspect at a time, so the next death among them names its URL.
# Suspects live in memory: after a urlserver restart nobody is suspected.
"""Suspects: who to charge when a spider dies holding many claims."""

from __future__ import annotations

SUSPECT_WAIT_S = 0.05  # a host whose head is a suspect the spider may not take looks again after this


class Suspects:
    """URL fingerprints under suspicion, and the one each spider holds."""

    def __init__(self) -> None:
        self.fps: set[bytes] = set()
        self.holders: dict[object, bytes] = {}  # spider -> the suspect it holds

    def __len__(self) -> int:
        return len(self.fps)

    def may_take(self, fp: bytes, spider) -> bool:
        """Whether `spider` may be handed the URL `fp` now."""
        return fp not in self.fps or spider not in self.holders

    def taken(self, fp: bytes, spider) -> None:
        if fp in self.fps:
            self.holders[spider] = fp

    def cleared(self, fp: bytes, spider) -> None:
        """The URL's transaction ended with a DONE: it did not kill its spider."""
        if self.holders.get(spider) == fp:
            del self.holders[spider]
        self.fps.discard(fp)

    def released(self, fp: bytes, spider) -> None:
        """The URL's claim ended without a verdict (timeout): it stays suspect."""
        if self.holders.get(spider) == fp:
            del self.holders[spider]

    def died(self, spider, held: list[bytes]) -> set[bytes]:
        """`spider` died holding the URLs `held`: those to charge an expiry."""
        suspect = self.holders.pop(spider, None)
        if suspect is not None and suspect in held:
            charged = {suspect}
        elif len(held) == 1:
            charged = set(held)
        else:
            charged = set()
        self.fps.update(held)  # the charged one too: it stays the one to watch
        return charged
