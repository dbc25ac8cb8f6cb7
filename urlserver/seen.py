# The seen-set: exact, because its truth is the key set of the LMDB `urls`
# database (64-bit fingerprints), with a Bloom filter in front so that most
# new URLs cost no disk lookup. The filter is blocked: a fingerprint's
# PROBES bits all fall in one 64-bit word (bits 24 and up of the
# fingerprint pick the word, four 6-bit slices of its low 24 bits the bits:
# from the URL's hash, db.py, up to 2^24 words = 128 MB; beyond, the
# origin's bits pick words too), so a test or an add is
# one array read and a few integer operations in Python -- about half the
# cost of probing four scattered bits. At 16 bits per expected URL that
# gives about 0.5% false positives (an LMDB get each) for 2 bytes of RAM per
# URL. Its size is a power of two of words (a mask, not a division, picks
# the word), and its capacity is what that size holds at BITS_PER_URL; when
# it fills it doubles and is rebuilt from LMDB, so it holds 16 to 32 bits
# per known URL (2 to 4 bytes: issue 16's 16 bytes of RAM per URL). A clean stop saves
# it beside the LMDB files, stamped with LMDB's last transaction id: the
# next start loads it only if that id is still the last one (nothing was
# committed since), else rebuilds it from the keys -- a minute per 100
# million URLs, which a kill -9 costs and a clean restart does not.
#
# RecentLinks sits in front of both: the link strings (in normal form) that
# recent DONEs carried and that are certainly recorded. Most of a page's
# outlinks are the same menus and neighbours its host's other pages
# carried, so a set lookup on the string the spider sent ends them before
# the regex, the hash, the filter probe and the LMDB get that confirms a
# maybe (Mercator's URL-seen cache, here in front of the Bloom filter).
# Only committed strings are trusted: what the open write transaction
# added waits in `pending` until commit() succeeds.
"""SeenSet: blocked Bloom filter in memory, exact fingerprints in LMDB; RecentLinks in front."""

from __future__ import annotations

import os
import struct
import sys
from array import array
from itertools import islice

import numpy as np

BITS_PER_URL = 16
PROBES = 4  # bits set per fingerprint, written out in _word_and_bits()
MIN_CAPACITY = 1 << 16
SAVED = struct.Struct("<8sQQQ")  # magic, LMDB txn id stamp, capacity, count; then the words
MAGIC = b"WRECKBF1"
REBUILD_CHUNK = 1 << 18  # fingerprints set per numpy pass in rebuild(): a few MB of temporaries
# Strings per generation: two generations of ~100-byte URLs cost about
# 50 MB at most (and their union's table, RecentLinks.known, 16 MB more),
# whatever the crawl's size, and cover a few thousand hosts' menus at once.
RECENT_LINKS = 1 << 18
# check_and_add_many() probes this many or more with numpy: its fixed cost
# (about 13 us here) is that of about 20 probes one by one (0.6 us each)
MANY_MIN = 24
# check_and_add_many()'s constants, as numpy scalars (a Python int would make numpy convert each time)
_ONE, _6, _12, _18, _24, _63 = (np.uint64(n) for n in (1, 6, 12, 18, 24, 63))


class SeenSet:
    """check_and_add()/might_contain() on 8-byte fingerprints; the caller writes the LMDB key."""

    def __init__(self, capacity: int = MIN_CAPACITY) -> None:
        self._alloc(max(capacity, MIN_CAPACITY))
        self.count = 0

    def _alloc(self, capacity: int) -> None:
        words = 1 << max(10, (capacity * BITS_PER_URL // 64 - 1).bit_length())
        self.capacity = words * 64 // BITS_PER_URL  # the power of two's room, not the request's
        self._mask = words - 1
        self._words = array("Q", bytes(8 * words))

    def _word_and_bits(self, fp: bytes) -> tuple[int, int]:
        h = int.from_bytes(fp, "big")
        bits = (1 << (h & 63)) | (1 << ((h >> 6) & 63)) | (1 << ((h >> 12) & 63)) | (1 << ((h >> 18) & 63))
        return (h >> 24) & self._mask, bits

    def might_contain(self, fp: bytes) -> bool:
        """False: certainly unseen. True: look in LMDB."""
        index, bits = self._word_and_bits(fp)
        return self._words[index] & bits == bits

    def add(self, fp: bytes) -> None:
        self.check_and_add(fp)

    def check_and_add(self, fp: bytes) -> bool:
        """Add `fp`; True if it might have been there already (look in LMDB).

        A false positive is not counted as an addition: the count runs short
        by at most the false-positive rate, which only delays a resize.
        """
        h = int.from_bytes(fp, "big")  # _word_and_bits(), inlined: the per-link hot path
        bits = (1 << (h & 63)) | (1 << ((h >> 6) & 63)) | (1 << ((h >> 12) & 63)) | (1 << ((h >> 18) & 63))
        words, index = self._words, (h >> 24) & self._mask
        word = words[index]
        if word & bits == bits:
            return True
        words[index] = word | bits
        self.count += 1
        return False

    def check_and_add_many(self, fps) -> list[bool]:
        """check_and_add() on each of `fps` (distinct 8-byte fingerprints,
        a list or a dict's keys), in one numpy pass: about a quarter
        of the per-link cost of the loop (issue 16). A fingerprint is
        reported as maybe there only by the bits set before the call, so two
        of the batch that share their bits both read as new: fewer false
        positives, never a false negative. Fewer than MANY_MIN go one by one."""
        if len(fps) < MANY_MIN:
            return [self.check_and_add(fp) for fp in fps]
        raw = b"".join(fps)
        h = np.frombuffer(raw, dtype=">u8").astype(np.uint64)
        bits = (_ONE << (h & _63)) | (_ONE << ((h >> _6) & _63)) | (_ONE << ((h >> _12) & _63)) | \
            (_ONE << ((h >> _18) & _63))
        index = (h >> _24) & np.uint64(self._mask)
        words = np.frombuffer(self._words, dtype=np.uint64)  # a view: writes land in the array
        maybe = (words[index] & bits) == bits
        np.bitwise_or.at(words, index, bits)
        self.count += len(maybe) - int(np.count_nonzero(maybe))
        return maybe.tolist()

    @property
    def full(self) -> bool:
        return self.count > self.capacity

    def rebuild(self, fingerprints, capacity: int) -> None:
        """Refill from every known fingerprint (LMDB keys, all FP_SIZE bytes
        long), sized for `capacity`: the same bits as check_and_add() on
        each, set REBUILD_CHUNK at a time with numpy (at 100 million URLs,
        a kill -9's restart and each doubling would otherwise cost minutes
        of Python)."""
        self._alloc(max(capacity, MIN_CAPACITY))
        self.count = 0
        words = np.frombuffer(self._words, dtype=np.uint64)  # a view: writes land in the array
        fingerprints = iter(fingerprints)
        while chunk := list(islice(fingerprints, REBUILD_CHUNK)):  # taken by C, not a loop of Python
            self._add_many(words, chunk)

    def _add_many(self, words: np.ndarray, fps: list[bytes]) -> None:
        # check_and_add() takes the word index and the bit numbers from the
        # low 64 bits of int.from_bytes(fp, "big"): each fingerprint's last 8 bytes
        raw = np.frombuffer(b"".join(fps), dtype=np.uint8).reshape(len(fps), -1)[:, -8:]
        h = np.ascontiguousarray(raw).view(">u8").ravel().astype(np.uint64)
        one = np.uint64(1)
        bits = (one << (h & 63)) | (one << ((h >> 6) & 63)) | (one << ((h >> 12) & 63)) | (one << ((h >> 18) & 63))
        np.bitwise_or.at(words, (h >> 24) & np.uint64(self._mask), bits)
        self.count += len(fps)

    @property
    def memory_bytes(self) -> int:
        return len(self._words) * 8

    def save(self, path: str, stamp: int) -> None:
        """Write the filter to `path` (atomically, mode 0600), stamped."""
        words = self._words
        if sys.byteorder == "big":
            words = array("Q", words)
            words.byteswap()
        tmp = f"{path}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(SAVED.pack(MAGIC, stamp, self.capacity, self.count))
            words.tofile(fh)
        os.replace(tmp, path)

    def load(self, path: str, stamp: int) -> bool:
        """Load a filter saved with this `stamp`; False (and unchanged) if there is none."""
        try:
            with open(path, "rb") as fh:
                magic, saved_stamp, capacity, count = SAVED.unpack(fh.read(SAVED.size))
                if magic != MAGIC or saved_stamp != stamp:
                    return False
                words = array("Q")
                words.frombytes(fh.read())
        except (OSError, struct.error, ValueError):
            return False
        if not words or len(words) & (len(words) - 1):
            return False  # not a power of two: not ours
        if sys.byteorder == "big":
            words.byteswap()
        self.capacity, self.count, self._words, self._mask = capacity, count, words, len(words) - 1
        return True


class RecentLinks:
    """Exact cache of normal-form link strings whose URLs are recorded.

    `pending` holds what the open write transaction recorded; committed()
    moves it into the trusted generations and aborted() drops it. A
    generation that fills becomes the previous one and the one before is
    forgotten, so memory stays bounded. `known` is the union of the two
    trusted generations, so that a link new to both costs one probe of a
    big set (a cache miss each) instead of two: on a page of new links the
    probes were a twelfth of discover_links (issue 16).
    """

    def __init__(self, limit: int = RECENT_LINKS) -> None:
        self.limit = limit
        self.pending: set[str] = set()
        self.current: set[str] = set()
        self.previous: set[str] = set()
        self.known: set[str] = set()  # current | previous

    def __contains__(self, url: str) -> bool:
        return url in self.known or url in self.pending

    def committed(self) -> None:
        """The write transaction committed: trust what it recorded."""
        if self.pending:
            self.current |= self.pending
            self.known |= self.pending
            self.pending = set()
            if len(self.current) > self.limit:
                self.known -= self.previous  # a string in both is forgotten early: only a cache miss
                self.previous, self.current = self.current, set()

    def aborted(self) -> None:
        """The write transaction was dropped: forget what it recorded."""
        self.pending = set()

    def __len__(self) -> int:
        return len(self.known)
