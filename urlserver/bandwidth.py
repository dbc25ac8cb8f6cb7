# HEAD where it saves a transfer (minimal requests and bandwidth), with a content-type filter
# (--accept-type): a URL whose path ends in an extension naming a type the
# filter refuses (.pdf, .zip, .jpg, .mp4, ...) is assigned with head=1
# (docs/protocol.txt 5.3), so the spider asks with HEAD first and skips the
# GET when the answer confirms the type. Extensions are read with the
# standard library's built-in table only (mimetypes.MimeTypes() without
# system files), so every machine decides alike. A host whose HEAD proved
# unusable (405, 501, a failure, or a type the GET contradicted: the spider
# says head=no on DONE) gets plain GETs from then on; the spider aborts
# unwanted types at the headers anyway.
# A page whose Content-Encoding names only codings no browser knows (the
# spider says again=raw on its DONE) is assigned once with raw=1: fetched
# with decoding off, its body stored as sent, as a browser shows it
# (docs/protocol.txt 5.3). The URLs waiting for it are held in memory, at
# most MAX_RAW_PENDING: after a restart, or past the bound, such a page is
# asked as usual once more and says again=raw again.
"""Bandwidth: which assignments ask for HEAD first, or for the body as sent."""

from __future__ import annotations

import mimetypes
import posixpath
from urllib.parse import urlsplit

from wreck.mediatype import accepts

_TYPES = mimetypes.MimeTypes()  # built-in table only: no /etc/mime.types
# Pages waiting for their raw=1 hand-out: a few a misconfigured site (each
# is handed out within the host's delay); a bound, as a site-wide bad header
# on a huge site must not grow the urlserver's memory
MAX_RAW_PENDING = 10_000


def guessed_type(url: str) -> str | None:
    """The media type a URL's path extension suggests, if any."""
    path = urlsplit(url).path
    ext = posixpath.splitext(path)[1].lower()
    if not ext:
        return None
    return _TYPES.types_map[1].get(ext) or _TYPES.types_map[0].get(ext)


class Bandwidth:
    """Decides head=1 and raw=1 per assignment; remembers hosts whose HEAD is
    unusable and pages to fetch as sent."""

    def __init__(self, accept_type: tuple[str, ...]) -> None:
        self.accept_type = accept_type
        self.no_head: set[int] = set()  # host ids
        self.raw: set[str] = set()  # URLs whose next assignment says raw=1
        self.stats = {"head_first": 0, "head_unusable_hosts": 0, "raw_again": 0}

    def room_for_raw(self) -> bool:
        """Whether another page may wait for its raw=1 hand-out (MAX_RAW_PENDING)."""
        return len(self.raw) < MAX_RAW_PENDING

    def fetch_raw(self, url: str) -> None:
        """The page `url` came in codings no browser knows (again=raw): its
        next assignment says raw=1."""
        self.raw.add(url)
        self.stats["raw_again"] += 1

    def extras(self, host_id: int, url: str) -> dict[str, str]:
        if self.raw and url in self.raw:
            self.raw.discard(url)
            return {"raw": "1"}
        if not self.accept_type or host_id in self.no_head:
            return {}
        guess = guessed_type(url)
        if guess is None or accepts(self.accept_type, guess):
            return {}
        self.stats["head_first"] += 1
        return {"head": "1"}

    def head_unusable(self, host_id: int) -> None:
        if host_id not in self.no_head:
            self.no_head.add(host_id)
            self.stats["head_unusable_hosts"] += 1
