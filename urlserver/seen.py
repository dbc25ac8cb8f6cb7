# The seen-set: exact, because its truth is the key set of the LMDB `urls`
# database (64-bit fingerprints), with a Bloom filter in front so that most
# new URLs cost no disk lookup. The filter is blocked: a fingerprint's
# PROBES bits all fall in one 64-bit word (the fingerprint's high half picks
# the word, 6-bit slices of its low half the bits), so a test or an add is
# one array read and a few integer operations in Python -- about half the
# cost of probing four scattered bits. At 16 bits per expected URL that
# gives about 0.5% false positives (an LMDB get each) for 2 bytes of RAM per
# URL. It doubles and is rebuilt from LMDB when it fills, and is rebuilt the
# same way at start, so it is never persisted itself.
"""SeenSet: blocked Bloom filter in memory, exact fingerprints in LMDB."""

from __future__ import annotations

from array import array

BITS_PER_URL = 16
PROBES = 4  # bits set per fingerprint, written out in _word_and_bits()
MIN_CAPACITY = 1 << 16


class SeenSet:
    """check_and_add()/might_contain() on 8-byte fingerprints; the caller writes the LMDB key."""

    def __init__(self, capacity: int = MIN_CAPACITY) -> None:
        self._alloc(max(capacity, MIN_CAPACITY))
        self.count = 0

    def _alloc(self, capacity: int) -> None:
        self.capacity = capacity
        words = 1 << max(10, (capacity * BITS_PER_URL // 64 - 1).bit_length())
        self._mask = words - 1
        self._words = array("Q", bytes(8 * words))

    def _word_and_bits(self, fp: bytes) -> tuple[int, int]:
        h = int.from_bytes(fp, "big")
        bits = (1 << (h & 63)) | (1 << ((h >> 6) & 63)) | (1 << ((h >> 12) & 63)) | (1 << ((h >> 18) & 63))
        return (h >> 32) & self._mask, bits

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
        words, index = self._words, (h >> 32) & self._mask
        word = words[index]
        if word & bits == bits:
            return True
        words[index] = word | bits
        self.count += 1
        return False

    @property
    def full(self) -> bool:
        return self.count > self.capacity

    def rebuild(self, fingerprints, capacity: int) -> None:
        """Refill from every known fingerprint (LMDB keys), sized for `capacity`."""
        self._alloc(max(capacity, MIN_CAPACITY))
        self.count = 0
        for fp in fingerprints:
            self.check_and_add(fp)

    @property
    def memory_bytes(self) -> int:
        return len(self._words) * 8
