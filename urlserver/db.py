# The urlserver's one LMDB environment and the byte layouts of its records.
#
#   urls     fp(8)                 -> URL record: state, tries, hops, expiries,
#                                     doc_id, depth, via fp(8), lineage length
#                                     u16, then the hop path (lineage.py) and,
#                                     for a via kept as text, SP and its URL,
#                                     then "url\nreason", then
#                                     (state | 0x80) its history and the
#                                     history's move count u8 (history.py)
#   queue    host_id(4) seq(8)     -> queue entry: fp, depth, hops, url
#   claims   trans_id(8)           -> host_id(4) + queue entry (in flight)
#   delayed  due_ms(8) fp(8)       -> host_id(4) + queue entry (retry later)
#   hosts    origin                -> host_id(4) admitted(4), admitted as of
#                                     the last fold (frontier.py, ADMITTED LOG)
#   robots   origin                -> msgspec-encoded RobotsRecord
#   meta     name                  -> u64 counters, FORMAT, seed hosts, doc ids of
#                                     robots.txt fetches in flight
#                                     ("robotsdoc:" + robots.txt URL), the
#                                     crawl id ("crawl_id", 32 hex digits),
#                                     the partition each IP token is out at
#                                     ("lent:" + IP, iptoken.py), the queued
#                                     URLs' total and the transaction that
#                                     wrote it ("queued", frontier.py), the
#                                     admitted counts a commit changed
#                                     ("admitted:" + txn id(8) -> host_id(4)
#                                     admitted(4) ..., frontier.py)
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
# version (format 1: keys of the URL's hash alone, before issue 16; format
# 2: URL records without their via and hop path, before issue 18) is
# refused in one line, not migrated -- it is a crawl's frontier, finished
# with the WRECK that made it (a format 2 record cannot say where its URL
# was found, and a migration would have to invent it).
# This module is the LMDB boundary: the rest of the urlserver packs no key
# by hand and never sees lmdb.Error. Errors of the environment and of a
# transaction's commit are translated here into StateError; the engine's
# entry points (Crawl's public methods) are wrapped by translate_errors, so
# a get or put that fails mid-way (map or disk full) arrives as StateError
# too, without a wrapper on every get of the hot paths.
#
# WRITER: every write transaction is begun, committed and aborted on one
# writer thread, so that a commit -- its page writes and fsyncs, 60 % of the
# event loop's time before issue 16 -- can run while the loop goes on
# (commit_soon: lmdb releases the GIL in mdb_txn_commit and in sync). The
# loop thread does the gets and puts in between, never at the same time as
# the writer: LMDB's writer lock is a mutex that only the thread that took
# it may release, so a write transaction ended on another thread than the
# one that began it would leave the lock held for good. A commit is two
# fsyncs, the pages' and then the meta page's (MDB_NOMETASYNC, then an
# env.sync): the loop may fill the next transaction during the second, and
# nothing of a transaction is sent before both (commit_soon's `durable`).
"""LMDB environment, databases, record codecs and the StateError boundary."""

from __future__ import annotations

import functools
from concurrent.futures import Future, ThreadPoolExecutor
import hashlib
import operator
import os
import secrets
import struct
import zlib

import lmdb
import msgspec

from wreck.lmdbformat import FormatError, check_marker, check_size, keep_whole
from wreck.protocol.handshake import CRAWL_ID_BYTES
from wreck.private import private_dir, private_files

from .urlstate import UrlState


FORMAT = 3  # the layout's version (meta b"format"); 1 had keys of the URL's hash alone, 2 no via and hop path
FORMAT_KEY = b"format"
FP_SIZE = 8  # origin CRC-32's low 16 bits (2) + URL BLAKE2b (6)
U32 = struct.Struct("!I")
U64 = struct.Struct("!Q")
QKEY = struct.Struct("!IQ")  # host_id, seq
ENTRY = struct.Struct(f"!{FP_SIZE}sHB")  # fp, depth, hops; url follows
# state, tries, hops, expiries, doc_id, depth, via fp, length of the lineage that follows
# (the hop path, then SP and the via's URL when the via is no record of this urlserver)
URLREC = struct.Struct(f"!BBBBIH{FP_SIZE}sH")
URLREC_SIZE = URLREC.size
_unpack_record = URLREC.unpack_from
_new_object = object.__new__
NO_VIA = bytes(FP_SIZE)  # a URL record's via when it has none (a seed): lineage.py
HISTORY_FLAG = 0x80  # in a URL record's state byte: a history trails the record (UrlRecord)
HISTORY_HEAD, HISTORY_MOVE = 4, 10  # its sizes: fetches u32, then per move f64 time, u8 event, u8 state
HOSTREC = struct.Struct("!II")  # host_id, admitted (pages budget used); an admitted log's item too
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


def pack_admitted(hosts) -> bytes:
    """An admitted log record (frontier.py): HOSTREC of each of `hosts` (Origins), end to end."""
    return b"".join(map(HOSTREC.pack, map(_ID, hosts), map(_ADMITTED, hosts)))


def unpack_admitted(raw: bytes):
    """(host_id, admitted) of each item of an admitted log record."""
    return HOSTREC.iter_unpack(raw)


_ID, _ADMITTED = operator.attrgetter("id"), operator.attrgetter("admitted")


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

    `via` is the fingerprint of the URL this one was first found on
    (NO_VIA for a seed), `path` its hop path from the seed
    (lineage.py: "" for a seed, bounded to lineage.MAX_PATH_LEN);
    `via_url` the via's URL itself when no record of this urlserver holds
    it (a link another partition forwarded), else "".
    `history` is the URL's fetch count and last moves (history.py), b"" for
    none; on disk it trails the text, followed by its move count (u8), and
    the state byte's HISTORY_FLAG says it is there: written with the record
    itself, it costs no LMDB operation of its own on the hot paths.
    """

    __slots__ = ("state", "tries", "hops", "expiries", "doc_id", "depth", "url", "reason", "history", "via", "path",
                 "via_url")

    def __init__(self, url: str, *, state: int | None = None, tries=0, hops=0, expiries=0, doc_id=0, depth=0,
                 reason="", history=b"", via=NO_VIA, path="", via_url=""):
        self.state, self.url, self.tries, self.hops = state, url, tries, hops
        self.expiries, self.doc_id, self.depth, self.reason = expiries, doc_id, depth, reason
        self.history, self.via, self.path, self.via_url = history, via, path, via_url

    def pack(self) -> bytes:
        history = self.history
        path = lineage_bytes(self.path, self.via_url)
        head = URLREC.pack(self.state | HISTORY_FLAG if history else self.state, min(self.tries, 255), self.hops,
                           min(self.expiries, 255), self.doc_id, min(self.depth, 65535), self.via, len(path))
        tail = (self.url + ("\n" + self.reason if self.reason else "")).encode("utf-8", "surrogateescape")
        if history:
            return head + path + tail + history + bytes(((len(history) - HISTORY_HEAD) // HISTORY_MOVE,))
        return head + path + tail

    @classmethod
    def unpack(cls, raw: bytes) -> UrlRecord:
        # twice per hand-out (claim and DONE): the fields set directly, not through __init__'s keywords
        rec = _new_object(cls)
        state, rec.tries, rec.hops, rec.expiries, rec.doc_id, rec.depth, rec.via, path_len = _unpack_record(raw)
        end = len(raw)
        if state & HISTORY_FLAG:
            state &= ~HISTORY_FLAG
            end -= 1 + HISTORY_HEAD + raw[-1] * HISTORY_MOVE
            rec.history = raw[end:-1]
        else:
            rec.history = b""
        rec.state = state
        start = URLREC_SIZE + path_len
        rec.url, _, rec.reason = raw[start:end].decode("utf-8", "surrogateescape").partition("\n")
        if path_len:
            rec.path, _, rec.via_url = raw[URLREC_SIZE:start].decode("ascii").partition(" ")
        else:
            rec.path = rec.via_url = ""
        return rec

    def as_dict(self) -> dict:
        return {"url": self.url, "state": UrlState(self.state).name, "tries": self.tries,
                "hops": self.hops, "expiries": self.expiries, "doc_id": self.doc_id or None,
                "depth": self.depth, "reason": self.reason, "path": self.path}


def lineage_bytes(path: str, via_url: str = "") -> bytes:
    """A URL record's lineage: the hop path, then SP and the via's URL when kept as text."""
    return (path + " " + via_url if via_url else path).encode("ascii")


def pack_new_record(state: int, depth: int, via: bytes, path: str, via_url: str = "") -> bytes:
    """The head of a new URL record (tries, hops, expiries and doc id 0), the
    URL's bytes to follow: discover_links builds one per page, not per link."""
    raw = lineage_bytes(path, via_url)
    return URLREC.pack(state, 0, 0, 0, 0, min(depth, 65535), via, len(raw)) + raw


def record_url(raw: bytes) -> str:
    """The URL of a packed URL record, read without unpacking the rest."""
    start = URLREC.size + int.from_bytes(raw[URLREC.size - 2:URLREC.size], "big")
    end = len(raw) - 1 - HISTORY_HEAD - raw[-1] * HISTORY_MOVE if raw[0] & HISTORY_FLAG else len(raw)
    newline = raw.find(b"\n", start, end)  # the reason follows
    return raw[start:newline if newline >= 0 else end].decode("utf-8", "surrogateescape")


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
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="urlserver-lmdb-writer")  # WRITER above
        self._write_txn = None  # the open write transaction, if any (aborted by close())
        self._ready: Future | None = None  # commit_soon(): its commit, then the next transaction
        self.sync = sync
        # metasync off: a commit fsyncs its pages and writes the meta page; the
        # meta page is synced apart (commit, commit_soon: WRITER above)
        self.env = lmdb.open(path, map_size=map_size, max_dbs=len(self.NAMES), sync=sync,
                             metasync=False, writemap=False, readahead=False, mode=0o600)
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
                             f"{FORMAT} (2: host-local URL keys; 3: each URL's via and hop path): finish that crawl "
                             f"with the WRECK that made it, or start with an empty directory")

    # -- transactions ---------------------------------------------------------------

    @translate_errors
    def begin(self, *, write: bool = False):
        """A new transaction (lmdb.Transaction: its gets and puts are the hot paths).
        A write transaction is begun on the writer thread (see WRITER above)."""
        if not write:
            return self.env.begin()
        ready, self._ready = self._ready, None
        txn = (ready or self._writer.submit(self.env.begin, write=True)).result()
        self._write_txn = txn
        return txn

    @translate_errors
    def commit(self, txn) -> None:
        self._end(txn, txn.commit).result()
        self._writer.submit(self._sync_meta).result()

    def commit_soon(self, txn) -> tuple[Future, Future]:
        """Commit `txn` on the writer thread: (committed, durable) Futures,
        their exception a StateError if it could not be written.

        `committed` is done once the commit has returned (its pages synced,
        the meta page written) and the writer has begun the next write
        transaction, which begin() then hands out without waiting: the
        caller may go on with it while the meta page is synced. `durable`
        is done once the meta page is synced too: only then may what the
        transaction holds be told to anyone (docs/protocol.txt 5.9). The
        caller's thread has no write transaction until `committed` is done
        (LMDB has one writer)."""
        if txn is self._write_txn:
            self._write_txn = None
        self._ready = committed = Future()
        return committed, self._writer.submit(self._commit_begin_sync, txn, committed)  # one hand-off

    def _commit_begin_sync(self, txn, committed: Future) -> None:
        try:
            _translated(txn.commit)
            following = self.env.begin(write=True)
        except BaseException as exc:
            committed.set_exception(exc)
            raise
        committed.set_result(following)
        self._sync_meta()

    def _sync_meta(self) -> None:
        """fsync what the last commit wrote after its own fsync (the meta page):
        LMDB's MDB_NOMETASYNC keeps the file whole without it, but may lose
        that last transaction at a power cut until it is done. The file is
        first made as long as its pages (lmdbformat.keep_whole), so that
        fsync keeps the length too."""
        try:
            keep_whole(self.env, self.path)
        except (lmdb.Error, OSError) as exc:
            raise StateError(f"cannot keep {self.path}/data.mdb as long as its pages: {exc}") from exc
        if self.sync:
            _translated(functools.partial(self.env.sync, True))

    @translate_errors
    def abort(self, txn) -> None:
        self._end(txn, txn.abort).result()

    def _end(self, txn, how) -> Future:
        if txn is self._write_txn:
            self._write_txn = None
        return self._writer.submit(_translated, how)

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
        txn, self._write_txn = self._write_txn, None
        ready, self._ready = self._ready, None
        if ready is not None and ready.exception() is None:
            txn = ready.result()  # (then no transaction was open besides)
        if txn is not None:  # on the writer thread, as it was begun (WRITER)
            self._writer.submit(_translated, txn.abort).exception()
        self._writer.shutdown(wait=True)
        self.env.close()


def _translated(how) -> None:
    """Run a transaction's commit or abort (on the writer thread), lmdb.Error as StateError."""
    try:
        how()
    except lmdb.Error as exc:
        raise StateError(f"{type(exc).__name__}: {exc}") from exc


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
