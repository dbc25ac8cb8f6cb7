# The store server's settings and named limits, in one frozen object built
# by the command line (cli.py) and passed down explicitly: nothing reads a
# global. Every limit sits beside the reason for its value.
"""StoreSettings: what a storeserver runs with."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from wreck.protocol import limits

DEFAULT_LISTEN = "127.0.0.1:7002"

# LMDB reserves address space, not disk: 1 GiB costs nothing until used, and
# the map doubles (close, grow, reopen) whenever a commit finds it full.
DEFAULT_MAP_SIZE = 1 << 30
# Growth step cap: doubling past this would reserve absurd address space.
MAX_MAP_GROWTH = 64 << 30

# Group commit: the writer waits this long after the first record of a batch
# for more to arrive, so many records share one fsync (5,000 docs/s at one
# fsync each is beyond most disks).
DEFAULT_COMMIT_WINDOW_MS = 3.0
# A batch is committed at once when it holds this many records or bytes:
# short write transactions keep ack latency and memory bounded.
MAX_BATCH_RECORDS = 512
MAX_BATCH_BYTES = 32 * 1024 * 1024

# Records received but not yet committed, over all connections. Beyond this
# the server stops reading from sockets (TCP pushes back on the spiders)
# until the writer catches up; it is what bounds memory while the disk is full.
MAX_BACKLOG_BYTES = 256 * 1024 * 1024

# A few spider processes per box, a few boxes: a thousand is generous, and
# each connection costs a receive buffer of up to one record.
DEFAULT_MAX_CONNECTIONS = 1024

# A peer that has not finished the handshake after this long is dropped, so
# silent or slow-loris connections cannot hold connection slots.
DEFAULT_HANDSHAKE_TIMEOUT_S = 10.0
# Connections still in their handshake: every spider of a fleet reconnects
# at once after a store restart, but a handshake takes milliseconds; a peer
# that opens many and says nothing is told "busy" here, before it can fill
# the connection cap.
DEFAULT_MAX_UNAUTHENTICATED = 128

# While commits fail (disk or map full), retry with this backoff.
RETRY_FIRST_S = 0.05
RETRY_MAX_S = 2.0

# zstd: level 3 is zstd's default, the knee of its speed/ratio curve.
DEFAULT_ZSTD_LEVEL = 3
# The dictionary is trained once this many documents (or bytes) of a crawl
# are stored; until then documents are compressed without one.
DICT_TRAIN_DOCS = 2000
# 1 MiB, not zstd's 112 KB default: a crawl spans many sites, and a larger
# dictionary holds more of their templates (bench/store_bench.py: on 40 sites
# the ratio goes 4.1 -> 7.1). It costs 1 MiB of memory per dictionary.
DICT_SIZE = 1 << 20
# Each training sample is a document's first bytes: the template lives there.
DICT_SAMPLE_BYTES = 64 * 1024


@dataclasses.dataclass(frozen=True, kw_only=True)
class StoreSettings:
    """Everything one storeserver process runs with."""

    data: Path
    host: str = "127.0.0.1"
    port: int = 7002
    secret: bytes = b""
    max_doc_len: int = limits.DEFAULT_MAX_DOC_SIZE * 2  # headers + body of a capped fetch
    map_size: int = DEFAULT_MAP_SIZE
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_unauthenticated: int = DEFAULT_MAX_UNAUTHENTICATED
    handshake_timeout_s: float = DEFAULT_HANDSHAKE_TIMEOUT_S
    commit_window_ms: float = DEFAULT_COMMIT_WINDOW_MS
    max_backlog_bytes: int = MAX_BACKLOG_BYTES
    zstd_level: int = DEFAULT_ZSTD_LEVEL
    dict_train_docs: int = DICT_TRAIN_DOCS
    dict_size: int = DICT_SIZE
    dedup: bool = True  # hash page bodies and mark exact duplicates (about 13 CPU-us per 15 KB page)
    near_dups: bool = False  # also simhash the text for near duplicates (the store's CPU per page about doubles)
    near_dup_distance: int = 3  # simhash bits (of 64) within which a page is a near duplicate
    plugins: tuple[str, ...] = ()  # NAME or NAME=ARG: plugins whose document hooks run here

    def welcome(self) -> dict[str, str]:
        """The settings announced in the handshake (SET lines)."""
        return {"max_doc_len": str(self.max_doc_len)}
