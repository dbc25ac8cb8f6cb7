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
# per known URL (2 to 4 bytes: issue 16's 16 bytes of RAM per URL).
#
# The words live in a shared mapping of a file beside the LMDB files
# (seen.bloom, FILE_HEADER bytes of header, then the words), so every bit
# set is in the kernel's page cache the moment it is set: a kill -9 loses
# none of them (the kernel writes a dead process's dirty shared pages back
# as any others), and the next start maps the file again instead of
# rebuilding the filter from every LMDB key (262 s at 80 million URLs).
# Nothing is written at a commit but the header's stamp (LMDB's last
# transaction id) and count. A start trusts the file if it was closed
# cleanly at exactly LMDB's last transaction, or if it was left open
# (a kill) on this same boot of the kernel (/proc's boot_id: the page
# cache, and so every bit, survived) at LMDB's last transaction or the one
# before (a kill between LMDB's commit and the stamp's update: the bits of
# that transaction were set before its puts). Anything else -- a power cut
# or kernel crash (a new boot: the file may miss pages), a file of another
# format, LMDB changed behind the file's back -- rebuilds the filter from
# LMDB's keys as before. A bit set for a transaction that was then aborted
# stays set: a filter may say "maybe" wrongly, never "no" for a known URL.
# Where the file cannot be made (a full disk: its blocks are allocated up
# front, so a write through the map never meets one), the filter is
# anonymous memory and a clean stop writes the same file format.
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

import functools
import logging
import mmap
import os
import struct
from itertools import islice

import numpy as np

from wreck.recentset import RecentSet

log = logging.getLogger("urlserver")
BITS_PER_URL = 16
PROBES = 4  # bits set per fingerprint, written out in _word_and_bits()
MIN_CAPACITY = 1 << 16
# magic, byte-order probe, boot id of the kernel that last had it open,
# state (CLEAN or OPEN), LMDB transaction id stamp, capacity, count; then
# zeros up to FILE_HEADER, then the words
HEADER = struct.Struct("<8sQ16sQQQQ")
FILE_HEADER = mmap.PAGESIZE  # the words start on a page of their own
MAGIC = b"WRECKBF2"
ORDER = 0x0102030405060708  # read back as written only on a machine of the writer's byte order
CLEAN, OPEN = 1, 2
BOOT_ID = "/proc/sys/kernel/random/boot_id"
REBUILD_CHUNK = 1 << 18  # fingerprints set per numpy pass in rebuild(): a few MB of temporaries
# Strings per generation: two generations of ~100-byte URLs cost about
# 50 MB at most (in one set, RecentLinks.known: wreck/recentset.py),
# whatever the crawl's size, and cover a few thousand hosts' menus at once.
RECENT_LINKS = 1 << 18
# check_and_add_many() probes this many or more with numpy: its fixed cost
# (about 13 us here) is that of about 20 probes one by one (0.6 us each)
MANY_MIN = 24
# check_and_add_many()'s constants, as numpy scalars (a Python int would make numpy convert each time)
_ONE, _6, _12, _18, _24, _63 = (np.uint64(n) for n in (1, 6, 12, 18, 24, 63))


@functools.cache  # read once: a process never outlives its boot
def boot_id() -> bytes:
    """This boot of the kernel's id (16 bytes), b"" where there is none to read."""
    try:
        with open(BOOT_ID) as fh:
            return bytes.fromhex(fh.read().strip().replace("-", ""))[:16]
    except (OSError, ValueError):
        return b""


class SeenSet:
    """check_and_add()/might_contain() on 8-byte fingerprints; the caller writes the LMDB key.

    In anonymous memory until load() maps a trusted file or rebuild() is
    given a `path`; from then on the words are that file's (see above)."""

    def __init__(self, capacity: int = MIN_CAPACITY) -> None:
        self.path: str | None = None  # the file the words are mapped from, None: anonymous memory
        self._map = None
        self._alloc(max(capacity, MIN_CAPACITY))
        self.count = 0

    def _alloc(self, capacity: int, path: str | None = None) -> None:
        """Fresh zeroed words for `capacity`: anonymous, or mapped from a new
        file at `path` (OSError if it cannot be made)."""
        words = 1 << max(10, (capacity * BITS_PER_URL // 64 - 1).bit_length())
        size = FILE_HEADER + 8 * words
        if path is None:
            mapped = mmap.mmap(-1, size)
        else:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                _allocate(fd, size)
                mapped = mmap.mmap(fd, size)
            finally:
                os.close(fd)
        self._attach(mapped, path, words * 64 // BITS_PER_URL)

    def _attach(self, mapped: mmap.mmap, path: str | None, capacity: int) -> None:
        old, self._map = self._map, mapped
        self.path = path
        self.capacity = capacity  # the power of two's room, not the request's
        self._words = memoryview(mapped)[FILE_HEADER:].cast("Q")  # indexed as fast as an array.array
        self._mask = len(self._words) - 1
        if old is not None:
            try:
                old.close()
            except BufferError:
                pass  # a view of it is still alive somewhere: unmapped when that goes

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
        words = np.frombuffer(self._words, dtype=np.uint64)  # a view: writes land in the mapping
        maybe = (words[index] & bits) == bits
        np.bitwise_or.at(words, index, bits)
        self.count += len(maybe) - int(np.count_nonzero(maybe))
        return maybe.tolist()

    @property
    def full(self) -> bool:
        return self.count > self.capacity

    def rebuild(self, fingerprints, capacity: int, *, path: str | None = None, stamp: int = 0) -> None:
        """Refill from every known fingerprint (LMDB keys, all FP_SIZE bytes
        long), sized for `capacity`: the same bits as check_and_add() on
        each, set REBUILD_CHUNK at a time with numpy (at 100 million URLs,
        a kill -9's restart and each doubling would otherwise cost minutes
        of Python). With `path`, into a new file that then replaces the one
        there, stamped `stamp` (LMDB's transaction the keys are read in);
        anonymous memory if that file cannot be made."""
        capacity = max(capacity, MIN_CAPACITY)
        tmp = None
        if path is not None:
            tmp = f"{path}.tmp"
            try:
                self._alloc(capacity, tmp)
            except OSError as exc:
                log.warning("seen-set file %s not made (%s): the seen-set is rebuilt at the next start "
                            "after a kill", tmp, exc.strerror or exc)
                _unlink(tmp)
                _unlink(path)  # no longer followed: a start after a kill must not trust it
                tmp = path = None
        if tmp is None:
            self._alloc(capacity)
        self.count = 0
        words = np.frombuffer(self._words, dtype=np.uint64)  # a view: writes land in the mapping
        fingerprints = iter(fingerprints)
        while chunk := list(islice(fingerprints, REBUILD_CHUNK)):  # taken by C, not a loop of Python
            self._add_many(words, chunk)
        del words
        if tmp is not None:
            self._write_header(OPEN, stamp)
            os.replace(tmp, path)  # the old file stays whole until this: a kill before it keeps that one
            self.path = path

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

    @property
    def mapped(self) -> bool:
        """The words are a file's pages (counted by the kernel as file RSS, not anonymous)."""
        return self.path is not None

    def _write_header(self, state: int, stamp: int) -> None:
        HEADER.pack_into(self._map, 0, MAGIC, ORDER, boot_id(), state, stamp, self.capacity, self.count)

    def committed(self, stamp: int) -> None:
        """LMDB committed transaction `stamp`: the file now covers it (two stores in the page cache)."""
        if self.path is not None:
            self._write_header(OPEN, stamp)

    def save(self, path: str, stamp: int) -> None:
        """A clean stop at LMDB's transaction `stamp`: the file marked clean
        and flushed to disk (msync), or written whole (atomically, mode 0600)
        if the filter is in anonymous memory. OSError if it cannot be."""
        if self.path == path:
            self._write_header(CLEAN, stamp)
            self._map.flush()
            return
        self._write_header(CLEAN, stamp)
        tmp = f"{path}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(self._map)
        os.replace(tmp, path)

    def load(self, path: str, stamp: int) -> bool:
        """Map the file at `path` if it covers LMDB's last transaction
        `stamp` (see above); False (and unchanged) if it does not, or there is none."""
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            return False
        try:
            size = os.fstat(fd).st_size
            words = (size - FILE_HEADER) // 8
            if size < FILE_HEADER + 8 or (size - FILE_HEADER) % 8 or words & (words - 1):
                return False  # not a power of two of words: not ours
            mapped = mmap.mmap(fd, size)
        except (OSError, ValueError):
            return False
        finally:
            os.close(fd)
        magic, order, boot, state, saved, capacity, count = HEADER.unpack_from(mapped, 0)
        me = boot_id()
        trusted = magic == MAGIC and order == ORDER and (
            (state == CLEAN and saved == stamp) or
            (state == OPEN and me != b"" and boot == me and saved <= stamp <= saved + 1))
        if not trusted:
            mapped.close()
            return False
        self._attach(mapped, path, capacity)
        self.count = count
        self._write_header(OPEN, stamp)
        return True

    def close(self) -> None:
        """Release the mapping (the filter is unusable after)."""
        self._words.release()
        try:
            self._map.close()
        except BufferError:
            pass


def _allocate(fd: int, size: int) -> None:
    """Take every block of the file now: a full disk is an OSError here, not a SIGBUS through the map later."""
    if hasattr(os, "posix_fallocate"):
        os.posix_fallocate(fd, 0, size)
        return
    zeros = bytes(1 << 20)  # no posix_fallocate (macOS): zeros written, a MB at a time
    for offset in range(0, size, len(zeros)):
        os.pwrite(fd, zeros[:size - offset], offset)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


class RecentLinks(RecentSet):
    """Exact cache of normal-form link strings whose URLs are recorded.

    `pending` holds what the open write transaction recorded; committed()
    trusts it (wreck/recentset.py: two bounded generations, one set
    `known` to probe) and aborted() drops it.
    """

    __slots__ = ("pending",)

    def __init__(self, limit: int = RECENT_LINKS) -> None:
        super().__init__(limit)
        self.pending: set[str] = set()

    def __contains__(self, url: str) -> bool:
        return url in self.known or url in self.pending

    def committed(self) -> None:
        """The write transaction committed: trust what it recorded."""
        if self.pending:
            self.update(self.pending)
            self.pending = set()

    def aborted(self) -> None:
        """The write transaction was dropped: forget what it recorded."""
        self.pending = set()
