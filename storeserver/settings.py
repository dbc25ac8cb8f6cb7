# The store server's settings and named limits, in one frozen object built
# by the command line (cli.py) and passed down explicitly: nothing reads a
# global. Every limit sits beside the reason for its value. Each setting is
# declared once, on its field (flag, help, default, unit, bounds:
# wreck/options.py); the command line is generated from the fields, and a
# StoreSettings checks itself when built, from flags or in code alike.
"""StoreSettings: what a storeserver runs with."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from wreck.options import DAEMONS, INPUT, OUTPUT, REQUIRED, parse_size, setting, size_text, validate
from wreck.protocol import limits

from .layout import DEFAULT_DISTANCE, MAX_DISTANCE  # not from dedup.py: wreck-crawl then imports no numpy

DEFAULT_LISTEN = "127.0.0.1:7002"

# LMDB reserves address space, not disk: 1 GiB costs nothing until used, and
# the map doubles (close, grow, reopen) whenever a commit finds it full.
DEFAULT_MAP_SIZE = 1 << 30
# Growth step cap: doubling past this would reserve absurd address space.
MAX_MAP_GROWTH = 64 << 30

# Group commit: the writer waits this long after the first record of a batch
# for more to arrive, so many records share one fsync (and one commit's
# CPU). Without the wait (0), batches still grow with the load (records
# arriving during an fsync form the next batch), but the store spent 10 to
# 20 % more CPU per page in make bench (2026-11-24, issue 16); the wait adds
# to a DONE's latency, which at --delay 0 no longer holds a host's next
# request back (after=, urlserver/chains.py).
DEFAULT_COMMIT_WINDOW_MS = 3.0
# A batch is committed at once when it holds this many records or bytes:
# short write transactions keep ack latency and memory bounded.
MAX_BATCH_RECORDS = 512
MAX_BATCH_BYTES = 32 * 1024 * 1024

# Records received but not yet committed, over all connections. Beyond this
# the server stops reading from sockets (TCP pushes back on the spiders)
# until the writer catches up; it is what bounds memory while the disk is full.
MAX_BACKLOG_BYTES = 256 * 1024 * 1024
# What one record costs beyond its document and URL while the store holds it
# (the Record and its strings in the queue, the prepared value, the result,
# the ack): about 280 bytes measured in the queue alone (tracemalloc), so
# 1 KiB covers every stage. Counted against the bound above, it makes tiny
# records sent fast stop the reading after 262,144 of them, not never.
RECORD_OVERHEAD = 1024
# A connection granted memory for a record must keep sending it: one that
# sends no byte of it for this long, while others wait for memory, is closed
# (its spider resends the record on a new connection), so a stalled or
# hostile spider cannot hold the bound for ever.
DEFAULT_RECORD_STALL_S = 60.0
# asyncio reads at most this much per read: a connection waiting for room
# holds at most this beyond what it was granted, so the store's memory for
# records stays under max_backlog_bytes + connections x READ_CHUNK.
READ_CHUNK = 256 * 1024

# A few spider processes per box, a few boxes: a thousand is generous, and
# each connection costs a receive buffer of up to one record.
DEFAULT_MAX_CONNECTIONS = 1024

# A peer that has not finished the handshake after this long is dropped, so
# silent or slow-loris connections cannot hold connection slots. A handshake
# is one round trip after HELLO plus two HMACs: 3 s covers any WAN.
DEFAULT_HANDSHAKE_TIMEOUT_S = 3.0
# Connections still in their handshake: every spider of a fleet reconnects
# at once after a store restart, but a handshake takes milliseconds; a peer
# that opens many and says nothing only evicts its own oldest ones
# (wreck/listener.py: half of these slots per source address, the oldest
# evicted when full), before it can fill the connection cap.
DEFAULT_MAX_UNAUTHENTICATED = 128

# While commits fail (disk or map full), retry with this backoff.
RETRY_FIRST_S = 0.05
RETRY_MAX_S = 2.0

# zstd: level 3 is zstd's default, the knee of its speed/ratio curve;
# zstd's levels run from 1 to 22. With the crawl's 1 MiB dictionary, level 1
# costs a real page a quarter less CPU for 11 % more disk but the benchmark
# web's pages three times as much, and the negative (fast) levels save little
# over 1 and lose much ratio (bench/docpack_bench.py, 2026-11-24-s8-spidernative;
# docs/operating.md).
DEFAULT_ZSTD_LEVEL = 3
MAX_ZSTD_LEVEL = 22
# The dictionary is trained once this many documents (or bytes) of a crawl
# are stored; until then documents are compressed without one.
DICT_TRAIN_DOCS = 2000
# 1 MiB, not zstd's 112 KB default: a crawl spans many sites, and a larger
# dictionary holds more of their templates (bench/store_bench.py: on 40 sites
# the ratio goes 4.1 -> 7.1). It costs 1 MiB of memory per dictionary.
DICT_SIZE = 1 << 20
# Each training sample is a document's first bytes: the template lives there.
DICT_SAMPLE_BYTES = 64 * 1024


# WARC files written as the crawl goes (--warc-dir; storeserver/warcdir.py):
# 1 GB is the size Heritrix and the IIPC's practice roll files at; archives'
# tools handle it, and a day of a large crawl is a few hundred files.
DEFAULT_WARC_SIZE = 10**9
# Below this a file would hold few records beside its warcinfo.
MIN_WARC_SIZE = 64 * 1024
DEFAULT_WARC_PREFIX = "WRECK"


def _warc_prefix(value: str) -> str | None:
    """Why a --warc-prefix cannot start a file name, or None."""
    if not value or not all(c.isalnum() or c in "-_." for c in value) or value.startswith("."):
        return "use letters, digits, '-', '_' and '.' (not first)"
    return None


# --unix PATH: a Unix-domain socket path is at most this many octets (the
# 108 of Linux's sun_path, less its terminating NUL).
MAX_UNIX_PATH = 107


def _unix_path(value: str) -> str | None:
    """Why --unix cannot name a socket, or None."""
    if not value:
        return None
    if not value.startswith("/"):
        return "give an absolute path (a spider reconnects to it as announced, 6.6)"
    if len(value.encode("utf-8", "surrogateescape")) > MAX_UNIX_PATH:
        return f"a Unix socket path is at most {MAX_UNIX_PATH} bytes"
    return None


# --help panels (wreck/options.py PANELS): how the documents are written is output
SERVER, STORAGE, DEDUP, ARCHIVE = DAEMONS, OUTPUT, OUTPUT, OUTPUT
SIZE = dict(parse=parse_size, show=size_text, metavar="SIZE")  # 4096, 512KiB, 64MiB, 1GiB


@dataclasses.dataclass(frozen=True, kw_only=True)
class StoreSettings:
    """Everything one storeserver process runs with."""

    data: Path = setting(REQUIRED, help="Directory of the store (created if missing); LMDB lives in DIR/store/",
                         metavar="DIR", panel=INPUT)
    host: str = "127.0.0.1"  # host and port: from --listen (cli.py)
    port: int = 7002
    secret: bytes = b""  # from --secret-file or the environment, never from argv (ps shows argv)
    max_doc_len: int = setting(limits.DEFAULT_MAX_DOC_SIZE * 2, help="Largest document (headers + body) accepted",
                               min=1, max=limits.MAX_DOC_LEN, why="the protocol's limit", panel=STORAGE,
                               **SIZE)  # headers + body of a capped fetch
    map_size: int = setting(DEFAULT_MAP_SIZE, help="Initial LMDB map size; doubled whenever full", above=0,
                            panel=STORAGE, **SIZE)
    http: str | None = setting(None, help="Serve the store's figures (documents, bytes, disk free) as JSON at "
                               "GET /status on HOST:PORT, for the urlserver's dashboard (its --store-http)",
                               default_help="off", metavar="HOST:PORT", panel=SERVER, per_run=True)
    unix: str = setting("", help="Also listen on a Unix-domain socket at PATH (mode 0600) and announce it: a "
                        "spider that reached this store on a loopback address moves to it, which costs less CPU "
                        "per record than TCP (docs/protocol.txt 6.6)", metavar="PATH", default_help="off",
                        check=_unix_path, panel=SERVER, per_run=True)
    max_connections: int = setting(DEFAULT_MAX_CONNECTIONS, help="Spider connections at once; more are told 'busy'",
                                   above=0, panel=SERVER)
    max_unauthenticated: int = setting(DEFAULT_MAX_UNAUTHENTICATED, help="Connections still in their handshake at once",
                                       above=0, panel=SERVER)
    handshake_timeout_s: float = setting(DEFAULT_HANDSHAKE_TIMEOUT_S, flag="--handshake-timeout", unit="s", above=0,
                                         help="Time a connection has to complete its handshake", panel=SERVER)
    record_stall_s: float = setting(DEFAULT_RECORD_STALL_S, flag="--record-stall-timeout", unit="s", above=0,
                                    help="A connection that sends no byte of a record it was given memory for, "
                                    "this long while others wait for memory, is closed", panel=SERVER)
    commit_window_ms: float = setting(DEFAULT_COMMIT_WINDOW_MS, help="How long a batch waits for more records "
                                      "before its commit", unit="ms", min=0, panel=STORAGE)
    max_backlog_bytes: int = setting(MAX_BACKLOG_BYTES, help="Memory for records, over all connections: queued "
                                     "for commit or still arriving, each counted with 1 KiB of overhead; a "
                                     "connection whose next record does not fit waits", above=0, panel=STORAGE,
                                     **SIZE)
    zstd_level: int = setting(DEFAULT_ZSTD_LEVEL, help="zstd compression level (1: less CPU, more disk on "
                              "real pages; docs/operating.md)", min=1, max=MAX_ZSTD_LEVEL,
                              why="zstd's levels", panel=STORAGE)
    dict_train_docs: int = setting(DICT_TRAIN_DOCS, help="Train the zstd dictionary from this many first documents "
                                   "(0: never)", unit="documents", min=0, panel=STORAGE)
    dict_size: int = setting(DICT_SIZE, help="Size of the trained zstd dictionary", above=0, panel=STORAGE, **SIZE)
    spider_compression: bool = setting(True, help="Give the trained dictionary to spiders that can compress "
                                       "(caps=zstd): they then send documents as the zstd frames this store "
                                       "would write, and it stores them as they come (docs/protocol.txt 6.7)",
                                       negatable=True, panel=STORAGE)
    dedup: bool = setting(True, help="Hash page bodies and mark exact duplicates (about 13 CPU-us per 15 KB page)",
                          panel=DEDUP)
    near_dups: bool = setting(False, help="Also mark near duplicates (simhash of the page text; about doubles the "
                              "store's CPU per page)", negatable=True, panel=DEDUP)
    near_dup_distance: int = setting(DEFAULT_DISTANCE, help="A page whose text simhash is this many bits (of 64) or "
                                     "fewer from a stored page's is its near duplicate", unit="bits", min=0,
                                     max=MAX_DISTANCE, why="what the banded index is sure to find", panel=DEDUP)
    warc_dir: str = setting("", help="Write WARC/1.1 files into DIR as documents are committed (request, "
                                   "response, revisit, metadata records; docs/warc.md)", metavar="DIR",
                                   default_help="no WARC files", panel=ARCHIVE)
    warc_size: int = setting(DEFAULT_WARC_SIZE, help="Close a WARC file and start the next one at this size",
                             min=MIN_WARC_SIZE, panel=ARCHIVE, **SIZE)
    warc_prefix: str = setting(DEFAULT_WARC_PREFIX, help="WARC file names: PREFIX-TIMESTAMP-SERIAL-HOST.warc.gz",
                               check=_warc_prefix, metavar="PREFIX", panel=ARCHIVE)
    operator: str = setting("", help="Who runs the crawl, with a contact (warcinfo's operator)", metavar="TEXT",
                            panel=ARCHIVE)
    crawl_name: str = setting("", help="The crawl's name (warcinfo's isPartOf)", metavar="NAME",
                              default_help="the data directory's name", panel=ARCHIVE)
    plugins: tuple[str, ...] = setting((), flag="--plugin", help="Enable plugin NAME or NAME=ARG; its document hook "
                                       "runs here (repeatable; docs/plugins.md)", repeatable=True,
                                       metavar="NAME[=ARG]", panel=OUTPUT)

    def __post_init__(self) -> None:
        """Refuse impossible values; SettingsError names the flag to change."""
        validate(self)

    def welcome(self) -> dict[str, str]:
        """The settings announced in the handshake (SET lines)."""
        welcome = {"max_doc_len": str(self.max_doc_len)}
        if self.unix:
            welcome["unix"] = self.unix  # 6.6: where a spider on this machine may reconnect
        return welcome
