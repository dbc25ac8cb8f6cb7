# A record-only assignment (docs/protocol.txt 5.3, nofetch=): the urlserver
# found no address it may hand out for the URL's host (its DNS failed for
# good, or every address it resolved to is refused), and asks the spider to
# record that in the store, so that the archive says what was tried. The
# spider connects nowhere: Fetcher.start answers such a request at once
# with the FetchResult made here (Specific DNS_FAILED or FORBIDDEN_ADDRESS,
# no document), which is reported, stored and DONE'd like any other.
"""NoFetch: the nofetch=, why= and refused= of an assignment."""

from __future__ import annotations

import dataclasses
from typing import Any

from wreck.protocol import ProtocolError, Specific
from wreck.protocol.textfields import decode_reason, ip as canonical_ip

# nofetch= values and the Specific code each is recorded with (5.3, Table 10).
SPECIFICS = {"dns": Specific.DNS_FAILED, "refused": Specific.FORBIDDEN_ADDRESS}
# Addresses kept from refused=: an answer rarely holds more; the bound keeps
# a record's extension field small whatever the urlserver sends.
MAX_REFUSED = 32


@dataclasses.dataclass(frozen=True, slots=True)
class NoFetch:
    """Why the urlserver asks for a record instead of a fetch."""

    kind: str  # "dns" or "refused" (an unknown word is recorded as "dns")
    why: str  # the urlserver's reason, decoded
    refused: tuple[str, ...] = ()  # the addresses it refused, canonical


def parse(extra: dict[str, str]) -> NoFetch | None:
    """The record-only request of an assignment's extensions, or None."""
    kind = extra.get("nofetch")
    if kind is None:
        return None
    try:
        why = decode_reason(extra.get("why", ""))
    except ProtocolError:
        why = ""
    refused = []
    for text in extra.get("refused", "").split(",")[:MAX_REFUSED]:
        try:
            refused.append(canonical_ip(text.encode("ascii")))
        except (ProtocolError, UnicodeEncodeError):
            continue  # an address we cannot name is left out, never guessed at
    return NoFetch(kind, why or f"not fetched: nofetch={kind}", tuple(refused))


def specific(nofetch: NoFetch) -> Specific:
    """The Specific code a record-only transaction is reported with."""
    return SPECIFICS.get(nofetch.kind, Specific.DNS_FAILED)
