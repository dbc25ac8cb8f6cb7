# Exact and near duplicates, marked inside the write transaction that stores
# a document, so a mark is as durable as the document and is acked with it.
#
# Exact: `bodies` maps a body hash to the first doc stored with that body.
# Near: the simhash is cut into BANDS bands of 16 bits; `bands` (dupsort)
# maps (band number, band value) to every (simhash, doc id) holding it. Two
# simhashes at most BANDS - 1 bits apart agree on at least one whole band
# (pigeonhole), so a lookup reads BANDS short duplicate lists, never the
# whole store (Manku, Jain, Das Sarma 2007, "Detecting near-duplicates for
# web crawling", with one table per band).
#
# Only 2xx pages take part: error pages and redirects of a site are all
# alike, and a robots.txt is not a page.
"""Duplicate marks: fingerprint a record, look it up, index it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import lmdb

from wreck.protocol import Packed, http_code

from . import layout as L

if TYPE_CHECKING:  # fingerprint.py loads numpy and lexbor: only for near duplicates, never for readers (wreck-crawl)
    from . import fingerprint as F
from .layout import BANDS, DEFAULT_DISTANCE, MAX_DISTANCE  # noqa: F401 (in layout: settings.py needs no numpy)
# Entries read from one band's list before giving up on it: a list this long
# means thousands of pages share 16 bits, and reading it all for every new
# page would make the store's cost grow with the crawl.
MAX_BAND_SCAN = 4096
ROBOTS_SUFFIX = "/robots.txt"


def content_type(head: bytes) -> str:
    """The Content-Type of a raw header block, lowercase ('' if absent)."""
    for line in head.split(b"\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-type":
            return value.strip().decode("latin-1").lower()
    return ""


def fingerprint_record(url: str, http: int, document: bytes, head_len: int, *,
                       near: bool = True, store_format: int = L.FORMAT_VERSION) -> L.Fingerprint | None:
    """The fingerprint of a stored response, or None if it is not a page.
    Without `near`, only the body hash (exact duplicates): the simhash's
    parse and text are most of the cost. The hash is the one a store of
    `store_format` keys its bodies by (layout.body_key)."""
    code = http_code(http) or 0
    if not 200 <= code < 300 or head_len >= len(document) or url.endswith(ROBOTS_SUFFIX):
        return None
    if not near:  # hashed in place: a copy of the body costs as much as its SHA-256
        return L.Fingerprint(L.body_key(memoryview(document)[head_len:], store_format), None)
    from . import fingerprint as F  # noqa: F811 (see the imports)

    return F.of_body(document[head_len:], content_type(document[:head_len]), store_format)


def fingerprint_packed(url: str, http: int, packed: Packed) -> L.Fingerprint | None:
    """fingerprint_record without near duplicates for a document a spider
    compressed (docs/protocol.txt 6.7): its DIGEST is the body hash a format 3
    store keys on, so nothing is decompressed or hashed again."""
    code = http_code(http) or 0
    if not 200 <= code < 300 or packed.head_len >= packed.doc_len or url.endswith(ROBOTS_SUFFIX):
        return None
    return L.Fingerprint(packed.digest, None)


def fingerprint_records(items: list[tuple[str, int, bytes, int]], *, near: bool,
                        store_format: int) -> list[L.Fingerprint | None]:
    """fingerprint_record of each (url, http, document, head_len): one task
    of a writer's pool for a slice of a batch, so that a page costs no
    future of its own."""
    return [fingerprint_record(*item, near=near, store_format=store_format) for item in items]


def _bands(simhash: int) -> list[bytes]:
    return [L.BAND_KEY.pack(i, (simhash >> (16 * i)) & 0xFFFF) for i in range(BANDS)]


class DupIndex:
    """The three databases, used inside the store's write transaction."""

    def __init__(self, env: lmdb.Environment, *, max_distance: int) -> None:
        if not 0 <= max_distance <= MAX_DISTANCE:
            raise ValueError(f"the near-duplicate distance must be 0 to {MAX_DISTANCE} (bits of 64)")
        self.max_distance = max_distance
        self.fprints = env.open_db(L.DB_FPRINTS)
        self.bodies = env.open_db(L.DB_BODIES)
        self.bands = env.open_db(L.DB_BANDS, dupsort=True, dupfixed=True)

    def mark(self, txn: lmdb.Transaction, doc_id: int, fp: L.Fingerprint) -> None:
        """Record `fp` for `doc_id` with its duplicate marks, and index it."""
        key = L.DOC_KEY.pack(doc_id)
        flags, dup_of, near_of, dist = 0, 0, 0, 0
        first = txn.get(fp.body_hash, db=self.bodies)
        if first is not None:
            flags |= L.FP_EXACT
            dup_of = L.DOC_KEY.unpack(first)[0]
        else:
            txn.put(fp.body_hash, key, db=self.bodies)
        sim = fp.simhash
        if sim is not None:
            flags |= L.FP_SIMHASH
            if not flags & L.FP_EXACT:
                found = self._nearest(txn, sim)
                if found is not None:
                    flags |= L.FP_NEAR
                    near_of, dist = found
                if found is None or dist:  # an identical simhash is indexed already
                    entry = L.BAND_ENTRY.pack(sim, doc_id)
                    for band in _bands(sim):
                        txn.put(band, entry, dupdata=True, db=self.bands)
        value = L.FPRINT.pack(flags, dist, 0, sim or 0, dup_of, near_of, fp.body_hash)
        txn.put(key, value, db=self.fprints)

    def _nearest(self, txn: lmdb.Transaction, sim: int) -> tuple[int, int] | None:
        """(doc id, distance) of the closest indexed page within the distance."""
        best = None
        cur = txn.cursor(db=self.bands)
        for band in _bands(sim):
            if not cur.set_key(band):
                continue
            for n, value in enumerate(cur.iternext_dup()):
                if n >= MAX_BAND_SCAN:
                    break
                other, doc_id = L.BAND_ENTRY.unpack(value)
                dist = (other ^ sim).bit_count()
                if dist <= self.max_distance and (best is None or (dist, doc_id) < (best[1], best[0])):
                    best = (doc_id, dist)
        return best


def read(txn: lmdb.Transaction, fprints, doc_id: int) -> dict | None:
    """The duplicate fields of one doc for wreck-dump, or None if it has none."""
    raw = txn.get(L.DOC_KEY.pack(doc_id), db=fprints)
    if raw is None:
        return None
    flags, dist, _, sim, dup_of, near_of, body = L.FPRINT.unpack(raw)
    return {
        "body_hash": body.hex(),
        "simhash": f"{sim:016x}" if flags & L.FP_SIMHASH else None,
        "duplicate_of": dup_of if flags & L.FP_EXACT else None,
        "near_duplicate_of": near_of if flags & L.FP_NEAR else None,
        "near_distance": dist if flags & L.FP_NEAR else None,
    }
