# The urlserver's one LMDB environment and the byte layouts of its records.
#
#   urls     fp(8)                 -> URL record: state, tries, hops, expiries,
#                                     doc_id, depth, then "url\nreason", then
#                                     (state | 0x80) its history and the
#                                     history's move count u8 (history.py)
#   queue    host_id(4) seq(8)     -> queue entry: fp, depth, hops, url
#   claims   trans_id(8)           -> host_id(4) + queue entry (in flight)
#   delayed  due_ms(8) fp(8)       -> host_id(4) + queue entry (retry later)
#   hosts    origin                -> host_id(4) admitted(4)
#   robots   origin                -> msgspec-encoded RobotsRecord
#   meta     name                  -> u64 counters, FORMAT, seed hosts, doc ids of
#                                     robots.txt fetches in flight
#                                     ("robotsdoc:" + robots.txt URL), the
#                                     crawl id ("crawl_id", 32 hex digits),
#                                     the partition each IP token is out at
#                                     ("lent:" + IP, iptoken.py)
#   feeds, feedguids                  -> feed state (feeds.py)
#   sitemaps                          -> URLs admitted as sitemaps (sitemaps.py)
#   revisits fp(8)                 -> recrawl.Revisit: validators, digest,
#                                     interval (only with --recrawl)
#   paces    "n"+host name | "i"+IP -> next_ok(f64) delay(f32) in_flight(u8):
#                                     a politeness slot as of the last commit
#                                     (politeness.py: restored at start)
#   control  "paused" | "host:"+name -> the operator's controls (control.py):
#            | "audit:"+seq(8)         the crawl paused, a host's pause, block
#                                      and delay; the audit list of changes
#   blocked  host_id(4) fp(8)      -> queue entry of a BLOCKED URL (kept for
#                                     the unblock)
#   outbox   partition(1) seq(8)   -> a batch of links for another partition,
#                                     msgpack (forward.py; until its ACK)
#   forwarded fp(8)                -> b"": a link forwarded to its partition
#                                     (forward.py; sent once, not per page)
#
# fp, a URL's fingerprint, is host-local (issue 16): the low 16 bits of
# the CRC-32 of the URL's origin (2 bytes), then the first 6 bytes of
# BLAKE2b of the normalised URL. So one origin's URLs are one contiguous key
# range: the links a page has to its own site land on the same few B-tree
# pages, and a commit dirties (copies and writes) a few pages per host
# instead of one page per new URL (IRLbot's DRUM and BUbiNG's sieve get the
# same effect by sorting batches). Origins with the same 16 bits share a
# range. Eight bytes, as the plain 64-bit hash before: 12-byte keys made
# the tree a level deeper and hand-outs slower. Two URLs collide only with
# the same 16 bits and the same 48: at 100 million URLs over 65,536
# buckets, about a 3e-4 chance of any collision, as with 64 random bits.
# The exact, persisted seen-set is the urls database's key set. All
# big-endian, so LMDB's byte order is numeric order.
#
# FORMAT is this layout's version, kept in meta: a directory of another
# version (format 1: keys of the URL's hash alone, before issue 16) is
# refused in one line, not migrated -- it is a crawl's frontier, finished
# with the WRECK that made it.
# This module is the LMDB boundary: the rest of the urlserver packs no key
# by hand and never sees lmdb.Error. Errors of the environment and of a
# transaction's commit are translated here into StateError; the engine's
# entry points (Crawl's public methods) are wrapped by translate_errors, so
# a get or put that fails mid-way (map or disk full) arrives as StateError
# too, without a wrapper on every get of the hot paths.
"""LMDB environment, databases, record codecs and the StateError boundary."""

from __future__ import annotations

import functools
import hashlib
import operator
import os
import secrets
import struct
import zlib

import lmdb
import msgspec

from wreck.lmdbformat import FormatError, check_marker, check_size
from wreck.protocol.handshake import CRAWL_ID_BYTES
from wreck.private import private_dir, private_files

from .urlstate import UrlState


FORMAT = 2  # the key layout's version (meta b"format"); 1 had keys of the URL's hash alone
FORMAT_KEY = b"format"
FP_SIZE = 8  # origin CRC-32's low 16 bits (2) + URL BLAKE2b (6)
U32 = struct.Struct("!I")
U64 = struct.Struct("!Q")
QKEY = struct.Struct("!IQ")  # host_id, seq
ENTRY = struct.Struct(f"!{FP_SIZE}sHB")  # fp, depth, hops; url follows
URLREC = struct.Struct("!BBBBIH")  # state, tries, hops, expiries, doc_id, depth
HISTORY_FLAG = 0x80  # in a URL record's state byte: a history trails the record (UrlRecord)
HISTORY_HEAD, HISTORY_MOVE = 4, 10  # its sizes: fetches u32, then per move f64 time, u8 event, u8 state
HOSTREC = struct.Struct("!II")  # host_id, admitted (pages budget used)
DKEY = struct.Struct(f"!Q{FP_SIZE}s")  # due_ms, fp
PACE = struct.Struct("!dfB")  # next_ok (s), delay (s), transactions in flight (0/1): 13 bytes a slot
PACE_NAME, PACE_IP = b"n", b"i"  # paces key prefixes: a host name's slot, an IP address's slot


class StateError(Exception):
    """The crawl state under --data cannot be opened, read or written (disk
    or map full, a damaged or foreign file); the lmdb error is its cause."""


def translate_errors(method):
    """Decorate an engine entry point: lmdb.Error raised inside becomes StateError."""

    @functools.wraps(method)
    def translated(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except lmdb.Error as exc:
            raise StateError(f"{type(exc).__name__}: {exc}") from exc

    return translated


def origin_prefix(origin: str) -> bytes:
    """The first 2 bytes of every fingerprint of `origin`'s URLs."""
    return (zlib.crc32(origin.encode("utf-8", "surrogateescape")) & 0xFFFF).to_bytes(2, "big")


def fingerprint(url: str) -> bytes:
    """The host-local fingerprint of a normalised URL: its origin's prefix, then 64 bits of the URL's hash."""
    scheme_end = url.find("://") + 3
    slash = url.find("/", scheme_end)
    origin = url if slash < 0 else url[:slash]  # as scope.split_host
    return origin_prefix(origin) + hashlib.blake2b(url.encode("utf-8", "surrogateescape"), digest_size=6).digest()


def pack_entry(fp: bytes, depth: int, hops: int, url: str) -> bytes:
    return ENTRY.pack(fp, min(depth, 65535), hops) + url.encode("utf-8", "surrogateescape")


def unpack_entry(raw: bytes) -> tuple[bytes, int, int, str]:
    fp, depth, hops = ENTRY.unpack_from(raw)
    return fp, depth, hops, raw[ENTRY.size:].decode("utf-8", "surrogateescape")


# entry_fp(entry): the fingerprint of a queue entry's URL (its first field);
# claim_key(trans_id): a claims key. C callables: both run on every handout.
entry_fp = operator.itemgetter(slice(0, FP_SIZE))
claim_key = U64.pack


def pack_held(host_id: int, entry: bytes) -> bytes:
    """A claims or delayed value: the queue entry with the id of its host."""
    return U32.pack(host_id) + entry


def unpack_held(value: bytes) -> tuple[int, bytes]:
    """(host_id, queue entry) of a claims or delayed value."""
    return U32.unpack_from(value)[0], value[4:]


LAST_FP = b"\xff" * FP_SIZE  # the greatest fingerprint: delayed_key(t, LAST_FP) bounds every key due by t


def delayed_key(due: float, fp: bytes) -> bytes:
    return DKEY.pack(int(due * 1000), fp)


def delayed_fp(key: bytes) -> bytes:
    """The fingerprint in a delayed key."""
    return key[8:8 + FP_SIZE]


def delayed_due(key: bytes) -> float:
    """The due time (s) of a delayed key."""
    return DKEY.unpack(key)[0] / 1000.0


def queue_prefix(host_id: int) -> bytes:
    """The key prefix of one host's queue: its entries are a contiguous range."""
    return U32.pack(host_id)


ROBOTS_DOC_PREFIX = b"robotsdoc:"  # meta key: robots.txt URL -> doc id of its fetch in flight
LENT_PREFIX = b"lent:"  # meta key + IP: the partition its token is out at (iptoken.py), u64
CRAWL_ID_KEY = b"crawl_id"  # meta key: the crawl's identity, announced to spiders (docs/protocol.txt 5.1)


class UrlRecord:
    """A URL's persisted state (a small mutable value object). A new record
    has the state None until urlstate.move() gives it its first one.

    `history` is the URL's fetch count and last moves (history.py), b"" for
    none; on disk it trails the text, followed by its move count (u8), and
    the state byte's HISTORY_FLAG says it is there: written with the record
    itself, it costs no LMDB operation of its own on the hot paths.
    """

    __slots__ = ("state", "tries", "hops", "expiries", "doc_id", "depth", "url", "reason", "history")

    def __init__(self, url: str, *, state: int | None = None, tries=0, hops=0, expiries=0, doc_id=0, depth=0,
                 reason="", history=b""):
        self.state, self.url, self.tries, self.hops = state, url, tries, hops
        self.expiries, self.doc_id, self.depth, self.reason = expiries, doc_id, depth, reason
        self.history = history

    def pack(self) -> bytes:
        history = self.history
        head = URLREC.pack(self.state | HISTORY_FLAG if history else self.state, min(self.tries, 255), self.hops,
                           min(self.expiries, 255), self.doc_id, min(self.depth, 65535))
        tail = (self.url + ("\n" + self.reason if self.reason else "")).encode("utf-8", "surrogateescape")
        if history:
            return head + tail + history + bytes(((len(history) - HISTORY_HEAD) // HISTORY_MOVE,))
        return head + tail

    @classmethod
    def unpack(cls, raw: bytes) -> UrlRecord:
        state, tries, hops, expiries, doc_id, depth = URLREC.unpack_from(raw)
        end, history = len(raw), b""
        if state & HISTORY_FLAG:
            state &= ~HISTORY_FLAG
            end -= 1 + HISTORY_HEAD + raw[-1] * HISTORY_MOVE
            history = raw[end:-1]
        url, _, reason = raw[URLREC.size:end].decode("utf-8", "surrogateescape").partition("\n")
        return cls(url, state=state, tries=tries, hops=hops, expiries=expiries, doc_id=doc_id,
                   depth=depth, reason=reason, history=history)

    def as_dict(self) -> dict:
        return {"url": self.url, "state": UrlState(self.state).name, "tries": self.tries,
                "hops": self.hops, "expiries": self.expiries, "doc_id": self.doc_id or None,
                "depth": self.depth, "reason": self.reason}


def record_state(raw: bytes) -> int:
    """The state of a packed URL record, read without unpacking it."""
    return raw[0] & ~HISTORY_FLAG


class Db:
    """The environment and its named databases."""

    NAMES = ("urls", "queue", "claims", "delayed", "hosts", "robots", "meta", "feeds", "feedguids", "sitemaps",
             "revisits", "paces", "control", "blocked", "outbox", "forwarded")

    @translate_errors
    def __init__(self, path: str, *, map_size: int = 64 * 1024**3, sync: bool = True) -> None:
        private_dir(path)  # 0700, and its files 0600: the frontier lists every URL
        fresh = not os.path.exists(os.path.join(path, "data.mdb"))
        self.path = path
        self.env = lmdb.open(path, map_size=map_size, max_dbs=len(self.NAMES), sync=sync,
                             metasync=sync, writemap=False, readahead=False, mode=0o600)
        if fresh:
            private_files(os.path.join(path, "data.mdb"), os.path.join(path, "lock.mdb"))
        try:  # before any page is read through the map, or a named database created
            check_size(self.env, path)
            check_marker(self.env, path, "urlserver")
        except FormatError as exc:
            self.env.close()
            raise StateError(str(exc)) from None
        for name in self.NAMES:
            setattr(self, name, self.env.open_db(name.encode()))
        try:
            self._check_format(path)
        except StateError:
            self.env.close()
            raise

    def _check_format(self, path: str) -> None:
        """StateError unless the key layout is FORMAT's; a new environment is marked."""
        with self.env.begin(write=True) as txn:
            raw = txn.get(FORMAT_KEY, db=self.meta)
            if raw is not None:
                found = U64.unpack(raw)[0]
            elif txn.stat(self.urls)["entries"] or txn.stat(self.hosts)["entries"]:
                found = 1  # made before the marker: keys of the URL's hash alone
            else:
                txn.put(FORMAT_KEY, U64.pack(FORMAT), db=self.meta)
                return
        if found != FORMAT:
            raise StateError(f"{path} holds a urlserver state of format {found}, this urlserver reads format "
                             f"{FORMAT} (host-local URL keys): finish that crawl with the WRECK that made it, "
                             f"or start with an empty directory")

    # -- transactions ---------------------------------------------------------------

    @translate_errors
    def begin(self, *, write: bool = False):
        """A new transaction (lmdb.Transaction: its gets and puts are the hot paths)."""
        return self.env.begin(write=write)

    @translate_errors
    def commit(self, txn) -> None:
        txn.commit()

    @translate_errors
    def abort(self, txn) -> None:
        txn.abort()

    @translate_errors
    def last_txnid(self) -> int:
        """The id of the last committed transaction (stamps the Bloom filter file)."""
        return self.env.info()["last_txnid"]

    # -- small records in meta and robots ------------------------------------------------

    def counter(self, txn, name: str, default: int = 1) -> int:
        raw = txn.get(name.encode(), db=self.meta)
        return U64.unpack(raw)[0] if raw else default

    def set_counter(self, txn, name: str, value: int) -> None:
        txn.put(name.encode(), U64.pack(value), db=self.meta)

    def crawl_id(self, txn, given: str | None = None) -> str:
        """The crawl's identity: `given` (--crawl-id, the same for every
        partition: docs/partitions.md) or drawn at random the first time (in
        `txn`, a write transaction) and kept for the crawl's life, so every
        restart announces the same one and two crawls never share one (6.1)."""
        raw = txn.get(CRAWL_ID_KEY, db=self.meta)
        if raw is None:
            raw = (given or secrets.token_hex(CRAWL_ID_BYTES)).encode("ascii")
            txn.put(CRAWL_ID_KEY, raw, db=self.meta)
        elif given is not None and raw.decode("ascii") != given:
            raise StateError(f"this crawl's id is {raw.decode('ascii')}, not --crawl-id {given}")
        return raw.decode("ascii")

    def robots_doc_id(self, txn, url: str) -> int | None:
        """The doc id given to the robots.txt fetch of `url` still in flight, if any."""
        raw = txn.get(ROBOTS_DOC_PREFIX + url.encode("ascii"), db=self.meta)
        return U64.unpack(raw)[0] if raw is not None else None

    def set_robots_doc_id(self, txn, url: str, doc_id: int) -> None:
        txn.put(ROBOTS_DOC_PREFIX + url.encode("ascii"), U64.pack(doc_id), db=self.meta)

    def forget_robots_doc_id(self, txn, url: str) -> None:
        txn.delete(ROBOTS_DOC_PREFIX + url.encode("ascii"), db=self.meta)

    def robots_record(self, txn, origin: str) -> bytes | None:
        """The packed robots.RobotsRecord cached for `origin`, if any."""
        return txn.get(origin.encode(), db=self.robots)

    def put_robots_record(self, txn, origin: str, raw: bytes) -> None:
        txn.put(origin.encode(), raw, db=self.robots)

    def put_pace(self, txn, is_ip: bool, key: str, next_ok: float, delay: float, in_flight: bool) -> None:
        """Persist one politeness slot (of a host name, or of an IP address if `is_ip`)."""
        prefix = PACE_IP if is_ip else PACE_NAME
        txn.put(prefix + key.encode("utf-8", "surrogateescape"), PACE.pack(next_ok, delay, in_flight),
                db=self.paces)

    def paces_saved(self, txn) -> list[tuple[bool, str, float, float, bool]]:
        """Every persisted slot: (is_ip, host name or IP, next_ok, delay, in_flight)."""
        out = []
        for raw_key, value in txn.cursor(db=self.paces):
            next_ok, delay, in_flight = PACE.unpack(value)
            out.append((raw_key[:1] == PACE_IP, raw_key[1:].decode("utf-8", "surrogateescape"),
                        next_ok, delay, bool(in_flight)))
        return out

    def put_token_lent(self, txn, ip: str, partition: int | None) -> None:
        """Keep that the token of `ip` is out at another `partition` (None: back here; iptoken.py)."""
        key = LENT_PREFIX + ip.encode("ascii")
        if partition is None:
            txn.delete(key, db=self.meta)
        else:
            txn.put(key, U64.pack(partition), db=self.meta)

    def tokens_lent(self, txn) -> dict[str, int]:
        """ip -> the partition its token was out at when this partition last committed."""
        cur = txn.cursor(db=self.meta)
        out: dict[str, int] = {}
        if cur.set_range(LENT_PREFIX):
            for key, value in cur:
                if not key.startswith(LENT_PREFIX):
                    break
                out[key[len(LENT_PREFIX):].decode("ascii")] = U64.unpack(value)[0]
        return out

    def close(self) -> None:
        self.env.close()


def saved_items(path: str, name: str) -> list[tuple[bytes, bytes]]:
    """Every item of the database `name` as last committed, read-only (for
    summaries and tests, beside a running urlserver); [] if unreadable."""
    try:
        env = lmdb.open(path, readonly=True, max_dbs=len(Db.NAMES), lock=True, create=False)
    except (lmdb.Error, FormatError):
        return []
    try:
        check_size(env, path)  # a truncated file: no SIGBUS, nothing read
        with env.begin() as txn:
            return list(txn.cursor(db=env.open_db(name.encode(), txn=txn, create=False)))
    except (lmdb.Error, FormatError):
        return []
    finally:
        env.close()


def saved_counts(path: str) -> dict[str, int]:
    """URLs by state as last committed (for summaries), {} if unreadable."""
    try:
        env = lmdb.open(path, readonly=True, max_dbs=len(Db.NAMES), lock=True, create=False)
    except lmdb.Error:
        return {}
    try:
        check_size(env, path)
        with env.begin() as txn:
            raw = txn.get(b"counts", db=env.open_db(b"meta", txn=txn, create=False))
        return dict(msgspec.msgpack.decode(raw)) if raw else {}
    except (lmdb.Error, FormatError):
        return {}
    finally:
        env.close()
