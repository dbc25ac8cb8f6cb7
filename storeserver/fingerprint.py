# Content fingerprints of a stored page: a 128-bit hash of the body (exact
# duplicates; SHA-256 from store format 3, BLAKE2b in older stores:
# layout.body_key) and a 64-bit simhash of its text (near duplicates).
#
# Text: the page parsed by selectolax's lexbor backend, with the elements
# that hold a site's boilerplate rather than its content (script, style,
# nav, header, footer, aside, form...) removed, then the body's text. On
# tests/web/corpus.py's pages (40 sites, each with its own template) it
# separates pages exactly as well as resiliparse's main-content extraction
# (`wreck-dump --text`) at a third of the cost (bench/dedup_bench.py), and
# the store pays it for every page.
# Simhash (Charikar 2002, as used for web pages by Manku et al. 2007): every
# pair of consecutive words is hashed to 64 bits, and bit i of the simhash
# is 1 when bit i is 1 in more than half of those hashes, so pages sharing
# most of their word pairs differ in few bits. Pairs, not triples: an edited
# word changes two features instead of three, and on the test web's pages
# (1,200 words) a one-word edit then stayed within 3 bits in 72 of 72
# cases, against 69 of 72 with triples; unrelated pages stayed 16+ apart.
#
# The hot part is vectorised with numpy (no maintained C simhash package
# exists on PyPI): the words' hashes come from one polynomial prefix sum over
# the text's bytes (hash of bytes [s, e) = (P[e] - P[s]) * B^-s mod 2^64),
# mixed by splitmix64's finaliser; the bit majority is one unpackbits and a
# column sum. bench/dedup_bench.py measures it.
"""body -> body hash, and simhash of its text."""

from __future__ import annotations

import numpy as np
from selectolax.lexbor import LexborHTMLParser

from .layout import BODY_HASH_BYTES, FORMAT_VERSION, Fingerprint, body_key  # noqa: F401 (BODY_HASH_BYTES: for callers)

SHINGLE_WORDS = 2  # words per shingle: one edited word changes two shingles
# Fewer words than this and the simhash says nothing: two short, unrelated
# texts (a login form, "Not found") come out within a few bits by chance.
MIN_WORDS = 20
# Text beyond this is not hashed: the first 256 KiB of an article decide
# whether it is a copy, and it bounds the work (and the power tables).
MAX_TEXT_BYTES = 256 * 1024
# Content types whose main text is fingerprinted; other bodies get the body
# hash only (an identical PDF is an exact duplicate, never a near one).
TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
# Elements whose text is a site's furniture, the same on all its pages.
BOILERPLATE_TAGS = ["script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside", "form"]

_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: invertible modulo 2^64
_BASE_INV = np.uint64(pow(int(_BASE), -1, 1 << 64))
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_SHIFT1, _SHIFT2, _SHIFT3 = np.uint64(30), np.uint64(27), np.uint64(31)
_ROT = (np.uint64(0x2545F4914F6CDD1D), np.uint64(0x9FB21C651E98DF25), np.uint64(1))  # per shingle slot


def _powers(base: np.uint64) -> np.ndarray:
    out = np.full(MAX_TEXT_BYTES + 1, base, dtype=np.uint64)
    out[0] = 1
    return np.cumprod(out, dtype=np.uint64)  # wraps modulo 2^64, as wanted


_POW = _powers(_BASE)
_POW_INV = _powers(_BASE_INV)
# Word bytes: ASCII letters and digits, and every byte of a UTF-8 multibyte
# character (so words of any script count); everything else separates.
_WORD = np.zeros(256, dtype=bool)
_WORD[[*range(48, 58), *range(97, 123), *range(128, 256)]] = True


def _mix(x: np.ndarray) -> np.ndarray:
    x = (x ^ (x >> _SHIFT1)) * _MIX1
    x = (x ^ (x >> _SHIFT2)) * _MIX2
    return x ^ (x >> _SHIFT3)


def simhash(text: str) -> int | None:
    """64-bit simhash of `text`'s word pairs; None below MIN_WORDS words."""
    data = np.frombuffer(text.lower().encode("utf-8")[:MAX_TEXT_BYTES], dtype=np.uint8)
    if not data.size:
        return None
    word = _WORD[data]
    edges = np.flatnonzero(np.diff(word, prepend=False, append=False))
    starts, ends = edges[0::2], edges[1::2]
    if starts.size < MIN_WORDS:
        return None
    with np.errstate(over="ignore"):
        prefix = np.empty(data.size + 1, dtype=np.uint64)
        prefix[0] = 0
        np.cumsum(data.astype(np.uint64) * _POW[: data.size], dtype=np.uint64, out=prefix[1:])
        words = _mix((prefix[ends] - prefix[starts]) * _POW_INV[starts] + (ends - starts).astype(np.uint64))
        n = words.size - SHINGLE_WORDS + 1
        shingles = words[:n] * _ROT[0]
        for i in range(1, SHINGLE_WORDS):
            shingles += words[i : n + i] * _ROT[i]
        shingles = _mix(shingles)
    bits = np.unpackbits(shingles.astype(">u8").view(np.uint8)).reshape(n, 64)
    majority = bits.sum(axis=0, dtype=np.int64) * 2 > n
    return int.from_bytes(np.packbits(majority).tobytes(), "big")


def body_hash(body: bytes | memoryview, store_format: int = FORMAT_VERSION) -> bytes:
    """The body's hash as a store of `store_format` keys it (layout.body_key)."""
    return body_key(body, store_format)


def distance(a: int, b: int) -> int:
    """Hamming distance of two simhashes."""
    return (a ^ b).bit_count()


def page_text(body: bytes, content_type: str) -> str:
    """The text of an HTML or plain-text body, boilerplate elements removed."""
    if content_type.startswith("text/plain"):
        return body.decode("utf-8", "replace")
    tree = LexborHTMLParser(body)
    tree.strip_tags(BOILERPLATE_TAGS)
    root = tree.body
    return root.text(separator=" ") if root is not None else ""


def of_body(body: bytes, content_type: str, store_format: int = FORMAT_VERSION) -> Fingerprint:
    """The fingerprint of a 2xx body whose Content-Type is `content_type` (lowercase)."""
    text_like = content_type.startswith(TEXT_TYPES) or (not content_type and body.lstrip()[:1] == b"<")
    return Fingerprint(body_hash(body, store_format), simhash(page_text(body, content_type)) if text_like else None)
