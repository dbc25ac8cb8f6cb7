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
"""Bandwidth: which assignments ask for HEAD first."""

from __future__ import annotations

import mimetypes
import posixpath
from urllib.parse import urlsplit

from wreck.mediatype import accepts

_TYPES = mimetypes.MimeTypes()  # built-in table only: no /etc/mime.types


def guessed_type(url: str) -> str | None:
    """The media type a URL's path extension suggests, if any."""
    path = urlsplit(url).path
    ext = posixpath.splitext(path)[1].lower()
    if not ext:
        return None
    return _TYPES.types_map[1].get(ext) or _TYPES.types_map[0].get(ext)


class Bandwidth:
    """Decides head=1 per assignment; remembers hosts whose HEAD is unusable."""

    def __init__(self, accept_type: tuple[str, ...]) -> None:
        self.accept_type = accept_type
        self.no_head: set[int] = set()  # host ids
        self.stats = {"head_first": 0, "head_unusable_hosts": 0}

    def extras(self, host_id: int, url: str) -> dict[str, str]:
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
