# The seen-set: exact, because its truth is the key set of the LMDB `urls`
# database (64-bit fingerprints), with a Bloom filter in a bytearray in
# front so that most new URLs cost no disk lookup. The filter holds 16 bits
# per expected URL with 4 probes (about 0.25% false positives, 2 bytes of
# RAM per URL); it doubles and is rebuilt from LMDB when it fills, and is
# rebuilt the same way at start, so it is never persisted itself.
"""SeenSet: Bloom filter in memory, exact fingerprints in LMDB."""

from __future__ import annotations

BITS_PER_URL = 16
PROBES = 4
MIN_CAPACITY = 1 << 16


class SeenSet:
    """add()/contains() on 8-byte fingerprints; the caller writes the LMDB key."""

    def __init__(self, capacity: int = MIN_CAPACITY) -> None:
        self._alloc(max(capacity, MIN_CAPACITY))
        self.count = 0

    def _alloc(self, capacity: int) -> None:
        self.capacity = capacity
        bits = 1 << max(16, (capacity * BITS_PER_URL - 1).bit_length())
        self._mask = bits - 1
        self._bits = bytearray(bits >> 3)

    def _probe(self, fp: bytes, add: bool) -> bool:
        """Test (or set) the PROBES bits of `fp`, by double hashing its halves."""
        h = int.from_bytes(fp, "big")
        h1, h2 = h & 0xFFFFFFFF, (h >> 32) | 1
        bits, mask = self._bits, self._mask
        for i in range(PROBES):
            idx = (h1 + i * h2) & mask
            if add:
                bits[idx >> 3] |= 1 << (idx & 7)
            elif not bits[idx >> 3] & (1 << (idx & 7)):
                return False
        return True

    def might_contain(self, fp: bytes) -> bool:
        """False: certainly unseen. True: look in LMDB."""
        return self._probe(fp, False)

    def add(self, fp: bytes) -> None:
        self._probe(fp, True)
        self.count += 1

    def check_and_add(self, fp: bytes) -> bool:
        """Add `fp`; True if it might have been there already (look in LMDB)."""
        if self._probe(fp, False):
            return True
        self.add(fp)
        return False

    @property
    def full(self) -> bool:
        return self.count > self.capacity

    def rebuild(self, fingerprints, capacity: int) -> None:
        """Refill from every known fingerprint (LMDB keys), sized for `capacity`."""
        self._alloc(max(capacity, MIN_CAPACITY))
        self.count = 0
        for fp in fingerprints:
            self.add(fp)

    @property
    def memory_bytes(self) -> int:
        return len(self._bits)
