# Lexical rules both line protocols share (docs/protocol.txt 1.2 and 5.5):
# one definition each, so the handshake's SET keys and the DONE line's
# extension keys can never drift apart.
"""Shared lexical patterns: keys and control characters."""

from __future__ import annotations

import re

from . import limits

# A setting or extension key: a lowercase letter, then letters, digits or '_'.
KEY_TEXT = r"[a-z][a-z0-9_]{0,%d}" % (limits.MAX_EXTRA_KEY_LEN - 1)
KEY = re.compile(KEY_TEXT)
KEY_BYTES = re.compile(KEY_TEXT.encode("ascii"))
# Control characters (C0, DEL, C1): never inside printable text on the wire.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
